// AVX-512 Panels16 kernels for float weights (F32, F16, BF16; formula and
// layout: kernels/cpu/panels.h). The 16 lanes are the 16 rows of a group:
// per element, one load (and conversion) of the 16 rows' weights, then for
// each token one FMA with the token's value broadcast from memory, into one
// accumulator per token. Up to 16 tokens per call keep the two FMA ports busy
// with independent chains while the weights are read once per call.
#if defined(__x86_64__)
#include <utility>

#include "kernels/cpu/panels.h"
#include "kernels/cpu/x86/avx512_util.h"

namespace db::kernels::avx512 {

namespace {

// load(p): the 16 rows' weights of one element, as f32.
struct F32Panel {
  static constexpr int64_t kBytes = 4 * kPanelRows;
  static __m512 load(const uint8_t* p) { return _mm512_loadu_ps(p); }
};

struct F16Panel {
  static constexpr int64_t kBytes = 2 * kPanelRows;
  static __m512 load(const uint8_t* p) { return _mm512_cvtph_ps(load256(p)); }
};

struct BF16Panel {
  static constexpr int64_t kBytes = 2 * kPanelRows;
  static __m512 load(const uint8_t* p) {
    const __m512i wide = _mm512_cvtepu16_epi32(load256(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
};

// How far ahead of the element being computed its weights are prefetched. A
// call over whole rows (decode) streams them from memory, and with several
// tokens per element the out-of-order window alone keeps too few lines in flight.
constexpr int64_t kPrefetchBytes = 2048;

template <class L, int NT>
void run(const GemmTile& t) {
  const auto rows = static_cast<__mmask16>((1u << t.nr) - 1u);
  __m512 acc[NT];
  for (int j = 0; j < NT; ++j) acc[j] = t.k0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(rows, t.y + j * t.ldy);
  const uint8_t* w = t.w + t.k0 * L::kBytes;
  const float* x = t.x + t.k0 * t.x_kstride;
  const int64_t ks = t.x_kstride;
#pragma GCC unroll 4
  for (int64_t k = t.k0; k < t.k1; ++k, w += L::kBytes, x += ks) {
    _mm_prefetch(reinterpret_cast<const char*>(w + kPrefetchBytes), _MM_HINT_T0);
    const __m512 wv = L::load(w);
#pragma GCC unroll 16
    for (int j = 0; j < NT; ++j) acc[j] = _mm512_fmadd_ps(wv, _mm512_set1_ps(x[j]), acc[j]);
  }
  for (int j = 0; j < NT; ++j) _mm512_mask_storeu_ps(t.y + j * t.ldy, rows, acc[j]);
}

// The kernel for t.nt tokens (1..16), each count compiled.
template <class L, int... NT>
void dispatch_tokens(const GemmTile& t, std::integer_sequence<int, NT...>) {
  static constexpr GemmTileFn kByTokens[] = {run<L, NT + 1>...};
  kByTokens[t.nt - 1](t);
}

template <class L>
void panel_float(const GemmTile& t) {
  dispatch_tokens<L>(t, std::make_integer_sequence<int, kPanelTileTokens>{});
}

}  // namespace

void panel_f32(const GemmTile& t) { panel_float<F32Panel>(t); }
void panel_f16(const GemmTile& t) { panel_float<F16Panel>(t); }
void panel_bf16(const GemmTile& t) { panel_float<BF16Panel>(t); }

void float_panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  out[kFirstFloatPanel] = {panel_f32, nullptr};
  out[kFirstFloatPanel + 1] = {panel_f16, nullptr};
  out[kFirstFloatPanel + 2] = {panel_bf16, nullptr};
}

}  // namespace db::kernels::avx512
#endif

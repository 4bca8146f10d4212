// AVX-512 VNNI Panels16 kernels (layout and formula: kernels/cpu/panels.h).
// The 16 int32 / float lanes of a register are the 16 rows of a group, so a
// block's integer dot products for one token are 8 vpdpbusd (4 codes per lane
// each, the token's 4 activation bytes broadcast), and no horizontal sums exist.
// A tile reads each weight block once for up to kPanelTileTokens tokens.
#if defined(__x86_64__)
#include <cstring>

#include "kernels/cpu/panels.h"
#include "kernels/cpu/x86/avx512_util.h"
#include "kernels/cpu/x86/exp_avx512.h"
#include "kernels/quant_blocks.h"

namespace db::kernels::avx512vnni {

namespace {

// The 4 activation codes at p in every lane.
__m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// 4-bit codes of one block: register i holds elements 4i..4i+3 of every row.
void load_nibbles(const uint8_t* codes, __m512i (&c)[8]) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int i = 0; i < 4; ++i) {
    const __m512i v = load512(codes + 64 * i);
    c[i] = _mm512_and_si512(v, low4);
    c[i + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
  }
}

__m512 load_halves(const uint8_t* p) { return _mm512_cvtph_ps(load256(p)); }

// One block of 16 rows: codes c[i] (elements 4i..4i+3 of every row), scales d
// and, with HasMin, offsets m. Bits: 4 (two codes per byte) or 8.
template <int Bits, int ZeroPoint, bool HasMin>
struct PanelBlock {
  static constexpr int kZeroPoint = ZeroPoint;
  static constexpr bool kHasMin = HasMin;
  static constexpr int64_t kCodeBytes = 4 * Bits * 16, kHeaderBytes = HasMin ? 64 : 32;
  __m512i c[8];
  __m512 d, m;
  void load(const uint8_t* codes, const uint8_t* header) {
    if (Bits == 4)
      load_nibbles(codes, c);
    else
      for (int i = 0; i < 8; ++i) c[i] = load512(codes + 64 * i);
    d = load_halves(header);
    if (HasMin) m = load_halves(header + 32);
  }
};
using Q4_0Block = PanelBlock<4, 8, false>;
using Q4_1Block = PanelBlock<4, 0, true>;
using Q8_0Block = PanelBlock<8, 128, false>;

// How far ahead of the block being computed its codes are prefetched.
constexpr int64_t kPrefetchBytes = 2048;

// acc[j] = the 16 rows of group `group` . token t.t0 + j, for j < NT.
template <class W, int NT>
void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
  const QuantizedActs& a = *t.acts;
  const int64_t nb = t.cols / kQK;
  const uint8_t* headers = group + nb * W::kCodeBytes;
  for (int j = 0; j < NT; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    // Stream the codes ahead, past the group's end into the next group (the
    // order the driver walks them in): a wide group is tens of KB, and the
    // hardware prefetcher alone keeps too few lines in flight.
    const uint8_t* ahead = group + b * W::kCodeBytes + kPrefetchBytes;
    for (int64_t l = 0; l < W::kCodeBytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(ahead + l), _MM_HINT_T0);
    W w;
    w.load(group + b * W::kCodeBytes, headers + b * W::kHeaderBytes);
#pragma GCC unroll 8
    for (int j = 0; j < NT; ++j) {
      const int64_t tb = (t.t0 + j) * a.nblocks + b;
      const int8_t* q = a.qs + (t.t0 + j) * a.qs_stride + b * kQK;
      // Two independent chains of 4 products, summed: exact integers either way.
      __m512i s0 = W::kZeroPoint ? _mm512_set1_epi32(-W::kZeroPoint * a.isum[tb]) : _mm512_setzero_si512();
      __m512i s1 = _mm512_setzero_si512();
      for (int i = 0; i < 8; i += 2) {
        s0 = _mm512_dpbusd_epi32(s0, w.c[i], broadcast4(q + 4 * i));
        s1 = _mm512_dpbusd_epi32(s1, w.c[i + 1], broadcast4(q + 4 * i + 4));
      }
      const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1));
      if (W::kHasMin) acc[j] = _mm512_fmadd_ps(w.m, _mm512_set1_ps(a.ds[tb]), acc[j]);
      acc[j] = _mm512_fmadd_ps(dot, _mm512_mul_ps(w.d, _mm512_set1_ps(a.d[tb])), acc[j]);
    }
  }
}

__mmask16 row_mask(const GemmTile& t) { return static_cast<__mmask16>((1u << t.nr) - 1u); }

template <class W, int NT>
void run(const GemmTile& t) {
  __m512 acc[NT];
  products<W, NT>(t, t.w, acc);
  for (int j = 0; j < NT; ++j) _mm512_mask_storeu_ps(t.y + j * t.ldy, row_mask(t), acc[j]);
}

// silu(gate) * up with the operations of avx512::swiglu (activations_avx512.cpp).
template <class W, int NT>
void run_swiglu(const GemmTile& t, const uint8_t* up) {
  __m512 silu[NT], u[NT];
  products<W, NT>(t, t.w, silu);
  for (int j = 0; j < NT; ++j)
    silu[j] = _mm512_div_ps(silu[j], _mm512_add_ps(_mm512_set1_ps(1.0f), exp512(_mm512_sub_ps(_mm512_setzero_ps(), silu[j]))));
  products<W, NT>(t, up, u);
  for (int j = 0; j < NT; ++j) _mm512_mask_storeu_ps(t.y + j * t.ldy, row_mask(t), _mm512_mul_ps(silu[j], u[j]));
}

// Calls K::template call<NT>(args...) with NT = nt (1..kPanelTileTokens).
template <class K, class... Args>
void with_tokens(int nt, Args... args) {
  static_assert(kPanelTileTokens == 8);
  switch (nt) {
    case 1: return K::template call<1>(args...);
    case 2: return K::template call<2>(args...);
    case 3: return K::template call<3>(args...);
    case 4: return K::template call<4>(args...);
    case 5: return K::template call<5>(args...);
    case 6: return K::template call<6>(args...);
    case 7: return K::template call<7>(args...);
    default: return K::template call<8>(args...);
  }
}

template <class W>
struct Gemm {
  template <int NT>
  static void call(const GemmTile* t) { run<W, NT>(*t); }
};

template <class W>
struct Swiglu {
  template <int NT>
  static void call(const GemmTile* t, const uint8_t* up) { run_swiglu<W, NT>(*t, up); }
};

template <class W>
void gemm(const GemmTile& t) {
  with_tokens<Gemm<W>>(t.nt, &t);
}

template <class W>
void gemm_swiglu(const GemmTile& t, const uint8_t* up) {
  with_tokens<Swiglu<W>>(t.nt, &t, up);
}

}  // namespace

void panel_q4_0(const GemmTile& t) { gemm<Q4_0Block>(t); }
void panel_q4_1(const GemmTile& t) { gemm<Q4_1Block>(t); }
void panel_q8_0(const GemmTile& t) { gemm<Q8_0Block>(t); }
void panel_swiglu_q4_0(const GemmTile& t, const uint8_t* up) { gemm_swiglu<Q4_0Block>(t, up); }
void panel_swiglu_q4_1(const GemmTile& t, const uint8_t* up) { gemm_swiglu<Q4_1Block>(t, up); }
void panel_swiglu_q8_0(const GemmTile& t, const uint8_t* up) { gemm_swiglu<Q8_0Block>(t, up); }

}  // namespace db::kernels::avx512vnni
#endif

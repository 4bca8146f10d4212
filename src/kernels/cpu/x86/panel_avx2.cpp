// AVX2 Panels16 kernels for 32-element blocks (layout and formula:
// kernels/cpu/panels.h; the AVX2 scheme: panel_avx2.h). A block's dot products
// for one token and 8 rows are 8 vpmaddubsw added in int16 and one vpmaddwd.
// Q8_0 has none here: its 8-bit codes (q + 128) would overflow vpmaddubsw's
// int16 sums, so at this level it stays in the row layout.
#if defined(__x86_64__)
#include "kernels/cpu/x86/panel_avx2.h"
#include "kernels/quant_blocks.h"

namespace db::kernels::avx2 {

namespace {

// A 4-bit block format: codes zero point (8: subtract via zsum; 0: none) and
// whether the header holds offsets m after the scales d.
template <int ZeroPoint, bool HasMin>
struct Nibble32 {
  static_assert(ZeroPoint == 0 || ZeroPoint == 8);
  static constexpr int kZeroPoint = ZeroPoint;
  static constexpr bool kHasMin = HasMin;
  static constexpr int64_t kCodeBytes = 256, kHeaderBytes = HasMin ? 64 : 32;
};
using Q4_0Format = Nibble32<8, false>;
using Q4_1Format = Nibble32<0, true>;

// How many blocks ahead of the one being computed its codes are prefetched.
constexpr int64_t kPrefetchBlocks32 = 8;

// The products of a group in 32-element block format W (see run() in panel_avx2.h).
template <class W>
struct Block32Products {
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m256 (&acc)[kHalves][NT]) {
    const QuantizedActs& a = *t.acts;
    const int64_t nb = t.cols / kQK;
    const uint8_t* headers = group + nb * W::kCodeBytes;
    for (int h = 0; h < kHalves; ++h)
      for (int j = 0; j < NT; ++j) acc[h][j] = _mm256_setzero_ps();
    const int64_t slot0 = act_slot(a, t.t0, 0);  // token t0 + j's block b: slot0 + b * kActTileTokens + j
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* codes = group + b * W::kCodeBytes;
      const uint8_t* header = headers + b * W::kHeaderBytes;
      prefetch_ahead(codes, W::kCodeBytes, kPrefetchBlocks32 * W::kCodeBytes);
      const int64_t slot = slot0 + b * kActTileTokens;
      const int8_t* q = a.qs + slot * kQK;
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) {
        __m256i w[8];
        load_nibbles(codes, h, w);
        const __m256 d = load_halves(header + 16 * h);
        const __m256 m = W::kHasMin ? load_halves(header + 32 + 16 * h) : _mm256_setzero_ps();
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) {
          __m256i s = widen(dot16<0, 8>(w, q + j * kQK));
          if constexpr (W::kZeroPoint == 8) s = _mm256_add_epi32(s, _mm256_set1_epi32(a.zsum[slot + j]));
          if constexpr (W::kHasMin) acc[h][j] = _mm256_fmadd_ps(m, _mm256_set1_ps(a.ds[slot + j]), acc[h][j]);
          const __m256 dda = _mm256_mul_ps(d, _mm256_set1_ps(a.d[slot + j]));
          acc[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), dda, acc[h][j]);
        }
      }
    }
  }
};

}  // namespace

void panel_q4_0(const GemmTile& t) { panel_gemm<Block32Products<Q4_0Format>>(t); }
void panel_q4_1(const GemmTile& t) { panel_gemm<Block32Products<Q4_1Format>>(t); }
void panel_swiglu_q4_0(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q4_0Format>>(t, up); }
void panel_swiglu_q4_1(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q4_1Format>>(t, up); }

void panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  out[0] = {panel_q4_0, panel_swiglu_q4_0};
  out[1] = {panel_q4_1, panel_swiglu_q4_1};
  out[3] = {panel_q4_k, panel_swiglu_q4_k};
  out[4] = {panel_q5_k, panel_swiglu_q5_k};
  out[5] = {panel_q6_k, panel_swiglu_q6_k};
}

bool has_panel_kernel(DType t) {
  return t == DType::Q4_0 || t == DType::Q4_1 || t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K;
}

}  // namespace db::kernels::avx2
#endif

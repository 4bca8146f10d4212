// AVX2 kernels for float weights (F32, F16, BF16): rows are widened to float32
// 8 elements at a time and multiplied into per-(row, token) FMA accumulators.
#if defined(__x86_64__)
#include <cstring>

#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/tile_dispatch.h"
#include "util/fp16.h"

namespace db::kernels::avx2 {

namespace {

struct F32Row {
  static __m256 load8(const uint8_t* row, int64_t i) { return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i); }
  static float load1(const uint8_t* row, int64_t i) {
    float v;
    std::memcpy(&v, row + 4 * i, sizeof v);
    return v;
  }
};

struct F16Row {
  static __m256 load8(const uint8_t* row, int64_t i) { return _mm256_cvtph_ps(load128(row + 2 * i)); }
  static float load1(const uint8_t* row, int64_t i) { return fp16_to_f32(load_u16(row + 2 * i)); }
};

struct BF16Row {
  static __m256 load8(const uint8_t* row, int64_t i) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(row + 2 * i)), 16));
  }
  static float load1(const uint8_t* row, int64_t i) { return bf16_to_f32(load_u16(row + 2 * i)); }
};

template <class L>
struct FloatKernel {
  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    const uint8_t* w[NR];
    for (int r = 0; r < NR; ++r) w[r] = s.w + r * t.w_stride;
    const float* x[NT];
    for (int j = 0; j < NT; ++j) x[j] = t.x + (s.t0 + j) * t.cols;
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) acc[r][j] = _mm256_setzero_ps();
    const int64_t n8 = t.cols / 8 * 8;
    for (int64_t i = 0; i < n8; i += 8) {
      __m256 wv[NR];
      for (int r = 0; r < NR; ++r) wv[r] = L::load8(w[r], i);
      for (int j = 0; j < NT; ++j) {
        const __m256 xv = _mm256_loadu_ps(x[j] + i);
        for (int r = 0; r < NR; ++r) acc[r][j] = _mm256_fmadd_ps(wv[r], xv, acc[r][j]);
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) {
        float sum = hsum_ps(acc[r][j]);
        for (int64_t i = n8; i < t.cols; ++i) sum += L::load1(w[r], i) * x[j][i];
        s.y[j * t.ldy + r] = sum;
      }
  }
};

}  // namespace

void gemm_f32(const GemmTile& t) { dispatch_tile<FloatKernel<F32Row>, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_f16(const GemmTile& t) { dispatch_tile<FloatKernel<F16Row>, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_bf16(const GemmTile& t) { dispatch_tile<FloatKernel<BF16Row>, kAvx2TileRows, kAvx2TileTokens>(t); }

}  // namespace db::kernels::avx2
#endif

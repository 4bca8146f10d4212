// AVX-512 kernels for float weights (F32, F16, BF16): 16 elements per step,
// masked loads for the tail, per-(row, token) FMA accumulators.
#if defined(__x86_64__)
#include "kernels/cpu/x86/avx512_util.h"
#include "kernels/cpu/x86/tile_dispatch.h"

namespace db::kernels::avx512 {

namespace {

// load<Full>(row, i, m): 16 elements from index i as floats; Full == false loads only the lanes in m.
struct F32Row {
  template <bool Full>
  static __m512 load(const uint8_t* row, int64_t i, __mmask16 m) {
    const float* p = reinterpret_cast<const float*>(row) + i;
    return Full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
  }
};

struct F16Row {
  template <bool Full>
  static __m512 load(const uint8_t* row, int64_t i, __mmask16 m) {
    return _mm512_cvtph_ps(Full ? load256(row + 2 * i) : _mm256_maskz_loadu_epi16(m, row + 2 * i));
  }
};

struct BF16Row {
  template <bool Full>
  static __m512 load(const uint8_t* row, int64_t i, __mmask16 m) {
    const __m256i half = Full ? load256(row + 2 * i) : _mm256_maskz_loadu_epi16(m, row + 2 * i);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
  }
};

template <class L>
struct FloatKernel {
  template <bool Full, int NR, int NT>
  static void step(const GemmTile& t, const SubTile& s, int64_t i, __mmask16 m, __m512 (&acc)[NR][NT]) {
    __m512 wv[NR];
    for (int r = 0; r < NR; ++r) wv[r] = L::template load<Full>(s.w + r * t.w_stride, i, m);
    for (int j = 0; j < NT; ++j) {
      const float* x = t.x + (s.t0 + j) * t.cols + i;
      const __m512 xv = Full ? _mm512_loadu_ps(x) : _mm512_maskz_loadu_ps(m, x);
      for (int r = 0; r < NR; ++r) acc[r][j] = _mm512_fmadd_ps(wv[r], xv, acc[r][j]);
    }
  }

  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    __m512 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) acc[r][j] = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= t.cols; i += 16) step<true, NR, NT>(t, s, i, 0xFFFF, acc);
    if (i < t.cols) step<false, NR, NT>(t, s, i, static_cast<__mmask16>((1u << (t.cols - i)) - 1), acc);
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) s.y[j * t.ldy + r] = _mm512_reduce_add_ps(acc[r][j]);
  }
};

}  // namespace

void gemm_f32(const GemmTile& t) { dispatch_tile<FloatKernel<F32Row>, kAvx512TileRows, kAvx512TileTokens>(t); }
void gemm_f16(const GemmTile& t) { dispatch_tile<FloatKernel<F16Row>, kAvx512TileRows, kAvx512TileTokens>(t); }
void gemm_bf16(const GemmTile& t) { dispatch_tile<FloatKernel<BF16Row>, kAvx512TileRows, kAvx512TileTokens>(t); }

}  // namespace db::kernels::avx512
#endif

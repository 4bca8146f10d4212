// AVX-512 RMSNorm; the same bytes as the scalar one (kernels/cpu/rms_norm.h):
// lane j of a row's double accumulator is its partial sum j, 8 floats widened
// per step; rows in fours (kernels/cpu/rms_norm_rows.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/rms_norm_rows.h"

namespace db::kernels::avx512 {

namespace {

struct Steps {
  using Sums = __m512d;
  static Sums zero() { return _mm512_setzero_pd(); }
  static void add_squares(Sums& s, __m256 v8) {
    const __m512d v = _mm512_cvtps_pd(v8);
    s = _mm512_fmadd_pd(v, v, s);
  }
  static void add(Sums& s, const float* p) { add_squares(s, _mm256_loadu_ps(p)); }
  static void add_tail(Sums& s, const float* p, int64_t n) {  // the other lanes add 0
    add_squares(s, _mm256_maskz_loadu_ps(static_cast<__mmask8>((1u << n) - 1u), p));
  }
  static void store(Sums s, double* part) { _mm512_store_pd(part, s); }
  static void scale_row(const float* x, const float* weight, int64_t dim, float inv, float* y) {
    const __m512 inv_rms = _mm512_set1_ps(inv);
    int64_t i = 0;
    for (; i + 16 <= dim; i += 16)
      _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(weight + i), _mm512_mul_ps(_mm512_loadu_ps(x + i), inv_rms)));
    if (i < dim) {
      const auto m = static_cast<__mmask16>((1u << (dim - i)) - 1u);
      const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), inv_rms);
      _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, weight + i), v));
    }
  }
};

}  // namespace

void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y) {
  norm_rows_in_fours<Steps>(x, weight, n_rows, dim, eps, y);
}

}  // namespace db::kernels::avx512
#endif

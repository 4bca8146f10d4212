// AVX2 RMSNorm; the same bytes as the scalar one (kernels/cpu/rms_norm.h): a
// row's partial sums 0-3 and 4-7 in two double accumulators, 8 floats widened
// per step; rows in fours (kernels/cpu/rms_norm_rows.h).
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/rms_norm_rows.h"

namespace db::kernels::avx2 {

namespace {

// Lanes [0, n) set as a maskload mask, n <= 8.
__m256i first_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

struct Steps {
  struct Sums {
    __m256d low, high;  // partial sums 0-3, 4-7
  };
  static Sums zero() { return {_mm256_setzero_pd(), _mm256_setzero_pd()}; }
  static void add_squares(Sums& s, __m256 v) {
    const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(v)), b = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
    s.low = _mm256_fmadd_pd(a, a, s.low);
    s.high = _mm256_fmadd_pd(b, b, s.high);
  }
  static void add(Sums& s, const float* p) { add_squares(s, _mm256_loadu_ps(p)); }
  static void add_tail(Sums& s, const float* p, int64_t n) { add_squares(s, _mm256_maskload_ps(p, first_lanes(n))); }
  static void store(const Sums& s, double* part) {
    _mm256_storeu_pd(part, s.low);
    _mm256_storeu_pd(part + 4, s.high);
  }
  static void scale_row(const float* x, const float* weight, int64_t dim, float inv, float* y) {
    const __m256 inv_rms = _mm256_set1_ps(inv);
    int64_t i = 0;
    for (; i + 8 <= dim; i += 8)
      _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(weight + i), _mm256_mul_ps(_mm256_loadu_ps(x + i), inv_rms)));
    if (i < dim) {
      const __m256i m = first_lanes(dim - i);
      const __m256 v = _mm256_mul_ps(_mm256_maskload_ps(x + i, m), inv_rms);
      _mm256_maskstore_ps(y + i, m, _mm256_mul_ps(_mm256_maskload_ps(weight + i, m), v));
    }
  }
};

}  // namespace

void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y) {
  norm_rows_in_fours<Steps>(x, weight, n_rows, dim, eps, y);
}

}  // namespace db::kernels::avx2
#endif

// AVX2 SwiGLU with vector exponentials (exp_avx2.h: the same bits as the
// AVX-512 version). Every element, the last partial vector's included, goes
// through the same vector operations (only the tail's loads and store are
// masked), so an element's result does not depend on its position in the array.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/x86/exp_avx2.h"

namespace db::kernels::avx2 {

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const auto silu_times_up = [&](__m256 g, __m256 u) {
    return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, exp256(_mm256_sub_ps(_mm256_setzero_ps(), g)))), u);
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, silu_times_up(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  if (i < n) {  // masked loads and store only for the tail (a masked store is slow on some cores)
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lane);
    _mm256_maskstore_ps(out + i, m, silu_times_up(_mm256_maskload_ps(gate + i, m), _mm256_maskload_ps(up + i, m)));
  }
}

}  // namespace db::kernels::avx2
#endif

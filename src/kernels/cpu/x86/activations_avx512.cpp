// AVX-512 SwiGLU with vector exponentials. Every element, the last partial
// vector's included, goes through the same masked vector code, so an element's
// result does not depend on its position in the array.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cpu/x86/exp_avx512.h"

namespace db::kernels::avx512 {

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const auto m = static_cast<__mmask16>((1u << std::min<int64_t>(16, n - i)) - 1u);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(m, up + i);
    const __m512 silu = _mm512_div_ps(g, _mm512_add_ps(one, exp512(_mm512_sub_ps(_mm512_setzero_ps(), g))));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(silu, u));
  }
}

}  // namespace db::kernels::avx512
#endif

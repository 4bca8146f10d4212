// AVX-512 Q8x32 activation quantizer; bit-identical to the scalar one in
// act_quant.cpp (same scale, same multiply, clamp, round to nearest even).
#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/act_quant.h"
#include "util/fp16.h"

namespace db::kernels::avx512 {

namespace {

// d rounded to half precision in the normal half range (see act_quant.h).
float half_rounded_scale(float d) { return d >= 0x1p-14f && d <= 65504.0f ? fp16_to_f32(f32_to_fp16(d)) : d; }

}  // namespace

void quantize_row_q8x32(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum) {
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  for (int64_t b = 0; b < cols / 32; ++b) {
    const __m512 x0 = _mm512_loadu_ps(x + 32 * b), x1 = _mm512_loadu_ps(x + 32 * b + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
    const float scale = amax / 127.0f;
    const __m512 id = _mm512_set1_ps(scale != 0.0f ? 1.0f / scale : 0.0f);
    const __m512i q0 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x0, id), lo), hi));
    const __m512i q1 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(x1, id), lo), hi));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 32 * b), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 32 * b + 16), _mm512_cvtepi32_epi8(q1));
    const int32_t sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    d[b] = half_rounded_scale(scale);
    ds[b] = d[b] * static_cast<float>(sum);
    zsum[b] = -8 * sum;
  }
}

}  // namespace db::kernels::avx512
#endif

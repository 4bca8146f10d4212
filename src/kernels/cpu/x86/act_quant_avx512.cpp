// AVX-512 activation quantizers (Q8x32, Q8x256); bit-identical to the scalar
// ones in act_quant.cpp (same scale, same multiply, clamp, round to nearest even).
#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/x86/avx512_util.h"
#include "util/fp16.h"

namespace db::kernels::avx512 {

namespace {

// d rounded to half precision in the normal half range (see act_quant.h).
float half_rounded_scale(float d) { return d >= 0x1p-14f && d <= 65504.0f ? fp16_to_f32(f32_to_fp16(d)) : d; }

// The same for 16 scales at once.
__m512 half_rounded_scales(__m512 d) {
  const __mmask16 normal = _mm512_cmp_ps_mask(d, _mm512_set1_ps(0x1p-14f), _CMP_GE_OQ) &
                           _mm512_cmp_ps_mask(d, _mm512_set1_ps(65504.0f), _CMP_LE_OQ);
  return _mm512_mask_mov_ps(d, normal, _mm512_cvtph_ps(_mm512_cvtps_ph(d, _MM_FROUND_TO_NEAREST_INT)));
}

// Int32 lane sums as a float-typed op for transpose_reduce16.
__m512 add_i32(__m512 a, __m512 c) {
  return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(c)));
}

// The largest |x| of the 32 floats at x, per lane of two halves.
__m512 abs_max32(const float* x) {
  return _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x)), _mm512_abs_ps(_mm512_loadu_ps(x + 16)));
}

// Codes of the 32 floats at x with inverse scale id, stored at qs; returns their 16 partial sums.
__m512i quantize32(const float* x, __m512 id, int8_t* qs) {
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  const __m512 f0 = _mm512_mul_ps(_mm512_loadu_ps(x), id), f1 = _mm512_mul_ps(_mm512_loadu_ps(x + 16), id);
  const __m512i q0 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f0, lo), hi));
  const __m512i q1 = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f1, lo), hi));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(q0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtepi32_epi8(q1));
  return _mm512_add_epi32(q0, q1);
}

// 16 consecutive blocks (512 floats) at once: the blocks' maxima and code sums
// are reduced by one transpose tree each, and their scales computed 16 to a
// register, instead of two horizontal reductions and two scalar divisions per
// block that the block's remaining work waits on.
void quantize_16_blocks(const float* x, int8_t* qs, float* d, float* ds, int32_t* zsum) {
  __m512 v[16];
  for (int b = 0; b < 16; ++b) v[b] = abs_max32(x + 32 * b);
  const __m512 amax = transpose_reduce16(v, [](__m512 a, __m512 c) { return _mm512_max_ps(a, c); });
  const __m512 scale = _mm512_div_ps(amax, _mm512_set1_ps(127.0f));
  // 1 / scale, or 0 for a zero block (NaN stays NaN, as in the scalar quantizer).
  const __mmask16 nonzero = _mm512_cmp_ps_mask(scale, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  alignas(64) float id[16];
  _mm512_store_ps(id, _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(1.0f), scale));
  for (int b = 0; b < 16; ++b) v[b] = _mm512_castsi512_ps(quantize32(x + 32 * b, _mm512_set1_ps(id[b]), qs + 32 * b));
  const __m512i sum = _mm512_castps_si512(transpose_reduce16(v, add_i32));
  const __m512 dh = half_rounded_scales(scale);
  _mm512_storeu_ps(d, dh);
  _mm512_storeu_ps(ds, _mm512_mul_ps(dh, _mm512_cvtepi32_ps(sum)));
  _mm512_storeu_si512(zsum, _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(sum, 3)));
}

// Codes of the 16 floats at x with inverse scale id, stored at qs; returns them as int32.
__m512i quantize16(const float* x, __m512 id, int8_t* qs) {
  const __m512 f = _mm512_mul_ps(_mm512_loadu_ps(x), id);
  const __m512i q = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(f, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(q));
  return q;
}

}  // namespace

void quantize_row_q8x256(const float* x, int64_t cols, int8_t* qs, float* d, int16_t* bsums) {
  for (int64_t b = 0; b < cols / 256; ++b) {
    const float* xb = x + 256 * b;
    // |x| first, so that a NaN element is skipped as by the scalar maximum.
    __m512 m = _mm512_setzero_ps();
    for (int g = 0; g < 16; ++g) m = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(xb + 16 * g)), m);
    d[b] = _mm512_reduce_max_ps(m) / 127.0f;
    const __m512 id = _mm512_set1_ps(d[b] != 0.0f ? 1.0f / d[b] : 0.0f);
    // Each 16-element group's codes in one register: one transpose tree gives the 16 group sums.
    __m512 q[16];
    for (int g = 0; g < 16; ++g) q[g] = _mm512_castsi512_ps(quantize16(xb + 16 * g, id, qs + 256 * b + 16 * g));
    const __m512i sums = _mm512_castps_si512(transpose_reduce16(q, add_i32));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(bsums + 16 * b), _mm512_cvtepi32_epi16(sums));
  }
}

void quantize_row_q8x32(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum) {
  const int64_t nb = cols / 32;
  int64_t b = 0;
  for (; b + 16 <= nb; b += 16) quantize_16_blocks(x + 32 * b, qs + 32 * b, d + b, ds + b, zsum + b);
  for (; b < nb; ++b) {
    const float scale = _mm512_reduce_max_ps(abs_max32(x + 32 * b)) / 127.0f;
    const __m512 id = _mm512_set1_ps(scale != 0.0f ? 1.0f / scale : 0.0f);
    const int32_t sum = _mm512_reduce_add_epi32(quantize32(x + 32 * b, id, qs + 32 * b));
    d[b] = half_rounded_scale(scale);
    ds[b] = d[b] * static_cast<float>(sum);
    zsum[b] = -8 * sum;
  }
}

}  // namespace db::kernels::avx512
#endif

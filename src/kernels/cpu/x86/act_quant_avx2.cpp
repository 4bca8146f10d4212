// AVX2 activation quantizers; bit-identical to the scalar ones in act_quant.cpp
// (same scale, same multiply, round to nearest even).
#if defined(__x86_64__)
#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "util/fp16.h"

namespace db::kernels::avx2 {

namespace {

static float block_amax(const float* x, int n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 m = _mm256_setzero_ps();
  for (int i = 0; i < n; i += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  return hmax_ps(m);
}

// Quantizes 32 floats with inverse scale id into q; returns the 8 int32 partial sums of
// codes 0-7, 8-15 (in lo) and 16-23, 24-31 (in hi) as two vectors.
void quantize32(const float* x, float id, int8_t* q, __m256i* lo16, __m256i* hi16) {
  const __m256 mul = _mm256_set1_ps(id);
  const __m256 hi = _mm256_set1_ps(127.0f), lo = _mm256_set1_ps(-127.0f);
  __m256i v[4];
  for (int k = 0; k < 4; ++k) {
    __m256 f = _mm256_mul_ps(_mm256_loadu_ps(x + 8 * k), mul);
    f = _mm256_min_ps(_mm256_max_ps(f, lo), hi);
    v[k] = _mm256_cvtps_epi32(f);
  }
  *lo16 = _mm256_add_epi32(v[0], v[1]);
  *hi16 = _mm256_add_epi32(v[2], v[3]);
  const __m256i p01 = _mm256_packs_epi32(v[0], v[1]);
  const __m256i p23 = _mm256_packs_epi32(v[2], v[3]);
  __m256i bytes = _mm256_packs_epi16(p01, p23);
  bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), bytes);
}

static float inverse_scale(float amax, float* d) {
  *d = amax / 127.0f;
  return *d != 0.0f ? 1.0f / *d : 0.0f;
}

// d rounded to half precision, as the GGUF reference engines store activation
// block scales (Q8_0 / Q8_1); d itself outside the normal half range, where
// rounding would lose precision (subnormals) or overflow.
float half_rounded_scale(float d) {
  return d >= 0x1p-14f && d <= 65504.0f ? fp16_to_f32(f32_to_fp16(d)) : d;
}

}  // namespace

void quantize_row_q8x32(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum) {
  for (int64_t b = 0; b < cols / 32; ++b) {
    const float id = inverse_scale(block_amax(x + 32 * b, 32), &d[b]);
    __m256i s0, s1;
    quantize32(x + 32 * b, id, qs + 32 * b, &s0, &s1);
    d[b] = half_rounded_scale(d[b]);
    const int32_t sum = hsum_epi32(_mm256_add_epi32(s0, s1));
    ds[b] = d[b] * static_cast<float>(sum);
    zsum[b] = -8 * sum;
  }
}

void quantize_row_q8x256(const float* x, int64_t cols, int8_t* qs, float* d, int16_t* bsums) {
  for (int64_t b = 0; b < cols / 256; ++b) {
    const float id = inverse_scale(block_amax(x + 256 * b, 256), &d[b]);
    for (int k = 0; k < 8; ++k) {
      __m256i s0, s1;
      quantize32(x + 256 * b + 32 * k, id, qs + 256 * b + 32 * k, &s0, &s1);
      bsums[16 * b + 2 * k] = static_cast<int16_t>(hsum_epi32(s0));
      bsums[16 * b + 2 * k + 1] = static_cast<int16_t>(hsum_epi32(s1));
    }
  }
}

}  // namespace db::kernels::avx2
#endif

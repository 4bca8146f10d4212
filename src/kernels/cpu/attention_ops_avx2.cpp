// AVX2 + FMA + F16C versions of the attention inner loops. Only functions with
// internal linkage carry the target attribute, so nothing compiled for AVX2 can
// be picked by the linker for baseline code.
#include <immintrin.h>

#include <cstring>

#include "kernels/cpu/attention_ops.h"

#define DB_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace db::kernels {

namespace {

DB_AVX2 float hsum(__m256 v) {
  const __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pairs = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

DB_AVX2 void convert_row(const uint8_t* src, DType dtype, int d, float* out) {
  int i = 0;
  if (dtype == DType::F16) {
    for (; i + 8 <= d; i += 8)
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i))));
    for (; i < d; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      out[i] = _cvtsh_ss(h);
    }
  } else {  // BF16
    for (; i + 8 <= d; i += 8) {
      const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i)));
      _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16)));
    }
    for (; i < d; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(out + i, &bits, 4);
    }
  }
}

DB_AVX2 void load_rows(const void* base, DType dtype, const int64_t* slots, int n_rows, int n_kv_heads, int head, int d,
                       float* dst) {
  const size_t elem = block_bytes(dtype);
  const auto* bytes = static_cast<const uint8_t*>(base);
  for (int r = 0; r < n_rows; ++r) {
    const uint8_t* src = bytes + (slots[r] * n_kv_heads + head) * static_cast<int64_t>(d) * elem;
    float* out = dst + static_cast<int64_t>(r) * d;
    if (dtype == DType::F32)
      std::memcpy(out, src, static_cast<size_t>(d) * sizeof(float));
    else
      convert_row(src, dtype, d, out);
  }
}

DB_AVX2 float dot(const float* a, const float* b, int d) {
  __m256 acc = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= d; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  float s = hsum(acc);
  for (; i < d; ++i) s += a[i] * b[i];
  return s;
}

DB_AVX2 void scores(const float* q, const float* keys, int n_keys, int d, float scale, float* out) {
  for (int j = 0; j < n_keys; ++j) out[j] = dot(q, keys + static_cast<int64_t>(j) * d, d) * scale;
}

DB_AVX2 void accumulate(float* acc, float correction, const float* weights, const float* values, int n_keys, int d) {
  const __m256 corr = _mm256_set1_ps(correction);
  int i = 0;
  for (; i + 8 <= d; i += 8) {
    __m256 a = _mm256_mul_ps(_mm256_loadu_ps(acc + i), corr);
    for (int j = 0; j < n_keys; ++j)
      a = _mm256_fmadd_ps(_mm256_set1_ps(weights[j]), _mm256_loadu_ps(values + static_cast<int64_t>(j) * d + i), a);
    _mm256_storeu_ps(acc + i, a);
  }
  for (; i < d; ++i) {
    float a = acc[i] * correction;
    for (int j = 0; j < n_keys; ++j) a += weights[j] * values[static_cast<int64_t>(j) * d + i];
    acc[i] = a;
  }
}

}  // namespace

const AttentionOps& attention_ops_avx2() {
  static const AttentionOps ops{&load_rows, &scores, &accumulate, &online_softmax_update, &attention_tile_by_query,
                                &store_row_scalar};
  return ops;
}

}  // namespace db::kernels

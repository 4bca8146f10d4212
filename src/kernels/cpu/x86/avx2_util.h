// AVX2 helpers shared by the AVX2 (and AVX-512) kernel files.
// Included only by files compiled with AVX2/FMA/F16C; internal linkage only.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace db::kernels {

static inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static inline int hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

static inline float hmax_ps(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

static inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
static inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// 16 bytes of packed nibbles -> 32 codes: low nibbles first, then high nibbles.
static inline __m256i unpack_nibbles32(const uint8_t* qs) {
  const __m128i q = load128(qs);
  const __m256i v = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
  return _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
}

// Sums of 4 adjacent u8 x s8 products as 8 int32 (no overflow while u * |s| * 2 < 32768).
static inline __m256i dot_u8s8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

}  // namespace db::kernels

// exp(x) for 8 floats at once with AVX2 + FMA: the operations of exp512
// (exp_avx512.h) on 8 lanes, so both give the same bits. 2^k * p(r) is two
// exact-or-once-rounded multiplies where exp512 has one scalef: p * 2^max(k, -100)
// is a normal float (exact), and the second factor 2^min(k + 100, 0) rounds
// the product once, as scalef does.
//
// Included only by files compiled with AVX2 flags; internal linkage only.
#pragma once
#include <immintrin.h>

namespace db::kernels {

// 2^k for integer-valued floats k in [-126, 127].
static inline __m256 pow2_256(__m256 k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23));
}

// e^x = 2^k * p: k = round(x / ln 2) and p = e^r by its Taylor polynomial on
// r = x - k ln 2 (|r| <= ln 2 / 2); x must be finite, |x| <= 104.
struct ExpParts {
  __m256 k, p;
};
static inline ExpParts exp256_parts(__m256 x) {
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);  // ln 2, high part (k * hi is exact)
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.4286068202862268e-06f), r);   // ln 2, low part
  __m256 p = _mm256_set1_ps(1.0f / 5040);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  return {k, p};
}

static inline __m256 exp256(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-104.0f)), _mm256_set1_ps(88.0f));
  const ExpParts e = exp256_parts(x);
  // k >= -150 after the clamp: k_hi = max(k, -100) keeps p * 2^k_hi normal, k - k_hi is in [-50, 0].
  const __m256 k_hi = _mm256_max_ps(e.k, _mm256_set1_ps(-100.0f));
  return _mm256_mul_ps(_mm256_mul_ps(e.p, pow2_256(k_hi)), pow2_256(_mm256_sub_ps(e.k, k_hi)));
}

// exp(max(x, -87)) for x <= 88 (or -inf): exp256's bits wherever x >= -87,
// with one scaling multiply where exp256 has two, since 2^k stays normal.
// For softmax weights next to a largest weight of about 1: raising the ones
// under e^-87 to e^-87 (~1.6e-38) leaves the sum of the weights unchanged.
static inline __m256 exp256_from_minus_87(__m256 x) {
  const ExpParts e = exp256_parts(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)));
  return _mm256_mul_ps(e.p, pow2_256(e.k));
}

}  // namespace db::kernels

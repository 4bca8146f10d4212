// exp(x) for 16 floats at once with AVX-512F: 2^k * p(r), k = round(x / ln 2),
// r = x - k ln 2 (two-part ln 2), p the degree-7 Taylor polynomial (relative
// error below 1e-7 on |r| <= ln 2 / 2). Inputs are clamped to [-104, 88]: the
// result is 0 (or a denormal) below, finite above. Deterministic: a lane's
// result depends only on its input.
//
// Included only by files compiled with AVX-512 flags; internal linkage only.
#pragma once
#include <immintrin.h>

namespace db::kernels {

static inline __m512 exp512(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(88.0f));
  const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);  // ln 2, high part (k * hi is exact)
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.4286068202862268e-06f), r);   // ln 2, low part
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, k);
}

}  // namespace db::kernels

#include "kernels/cpu/rope.h"

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace db::kernels {

void rope_angles(int32_t position, const float* inv_freq, int n_pairs, float mscale, float* cos_out, float* sin_out) {
  const float pos = static_cast<float>(position);
  for (int i = 0; i < n_pairs; ++i) {
    const double theta = static_cast<double>(pos * inv_freq[i]);
    cos_out[i] = static_cast<float>(std::cos(theta)) * mscale;
    sin_out[i] = static_cast<float>(std::sin(theta)) * mscale;
  }
}

namespace {

// Pair i = (a, b) becomes (a cos_i - b sin_i, b cos_i + a sin_i).
void rotate_pair(float* a, float* b, float c, float s) {
  const float x0 = *a, x1 = *b;
  *a = x0 * c - x1 * s;
  *b = x1 * c + x0 * s;
}

// INTERLEAVED pairs (2i, 2i + 1) of one head, two pairs per SSE register where
// available: [a0 b0 a1 b1] * [c0 c0 c1 c1] + [b0 a0 b1 a1] * [-s0 s0 -s1 s1],
// the same products and the same sums (a - b s is a + b (-s) exactly).
void rotate_interleaved(float* v, int n_pairs, const float* cos_v, const float* sin_v) {
  int i = 0;
#if defined(__SSE2__)
  const __m128 flip_even = _mm_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f);  // sign bits of lanes 0 and 2
  for (; i + 2 <= n_pairs; i += 2) {
    const __m128 c = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(cos_v + i)));
    const __m128 s = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(sin_v + i)));
    const __m128 cc = _mm_unpacklo_ps(c, c), ss = _mm_xor_ps(_mm_unpacklo_ps(s, s), flip_even);
    const __m128 x = _mm_loadu_ps(v + 2 * i);
    const __m128 swapped = _mm_shuffle_ps(x, x, _MM_SHUFFLE(2, 3, 0, 1));
    _mm_storeu_ps(v + 2 * i, _mm_add_ps(_mm_mul_ps(x, cc), _mm_mul_ps(swapped, ss)));
  }
#endif
  for (; i < n_pairs; ++i) rotate_pair(v + 2 * i, v + 2 * i + 1, cos_v[i], sin_v[i]);
}

}  // namespace

void rope_rotate(float* x, int n_heads, int head_dim, int n_pairs, RopeStyle style, const float* cos_v,
                 const float* sin_v) {
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    if (style == RopeStyle::INTERLEAVED)
      rotate_interleaved(v, n_pairs, cos_v, sin_v);
    else
      for (int i = 0; i < n_pairs; ++i) rotate_pair(v + i, v + i + n_pairs, cos_v[i], sin_v[i]);
  }
}

}  // namespace db::kernels

#include "kernels/cpu/rope.h"

#include <cmath>

namespace db::kernels {

void rope_angles(int32_t position, const float* inv_freq, int n_pairs, float mscale, float* cos_out, float* sin_out) {
  const float pos = static_cast<float>(position);
  for (int i = 0; i < n_pairs; ++i) {
    const double theta = static_cast<double>(pos * inv_freq[i]);
    cos_out[i] = static_cast<float>(std::cos(theta)) * mscale;
    sin_out[i] = static_cast<float>(std::sin(theta)) * mscale;
  }
}

void rope_rotate(float* x, int n_heads, int head_dim, int n_pairs, RopeStyle style, const float* cos_v,
                 const float* sin_v) {
  const int first_stride = style == RopeStyle::INTERLEAVED ? 2 : 1;   // where pair i's first element is
  const int partner = style == RopeStyle::INTERLEAVED ? 1 : n_pairs;  // offset of its second element
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < n_pairs; ++i) {
      float* a = v + i * first_stride;
      float* b = a + partner;
      const float x0 = *a, x1 = *b;
      *a = x0 * cos_v[i] - x1 * sin_v[i];
      *b = x1 * cos_v[i] + x0 * sin_v[i];
    }
  }
}

}  // namespace db::kernels

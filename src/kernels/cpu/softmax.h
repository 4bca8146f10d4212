// Online (streaming) softmax over score chunks, f32: the running maximum m and
// normalizer l are updated chunk by chunk, so attention never materializes a
// full row of scores.
#pragma once
#include <cstdint>

namespace db::kernels {

// Running state of one softmax row. Start with m = -inf, l = 0.
struct OnlineSoftmax {
  float m;  // largest score seen so far
  float l;  // sum of exp(score - m) over scores seen so far
};

// Folds n scores into the state: replaces scores[j] by exp(scores[j] - m_new)
// and returns the factor exp(m_old - m_new) by which sums accumulated under the
// old maximum (l, and the caller's weighted values) must be scaled. n >= 1.
float online_softmax_update(OnlineSoftmax& state, float* scores, int64_t n);

}  // namespace db::kernels

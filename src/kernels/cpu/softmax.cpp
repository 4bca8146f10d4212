#include "kernels/cpu/softmax.h"

#include <algorithm>
#include <cmath>

namespace db::kernels {

float online_softmax_update(OnlineSoftmax& state, float* scores, int64_t n) {
  float chunk_max = scores[0];
  for (int64_t j = 1; j < n; ++j) chunk_max = std::max(chunk_max, scores[j]);
  const float m_new = std::max(state.m, chunk_max);
  const float correction = std::exp(state.m - m_new);  // 0 when state.m is -inf
  float sum = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    scores[j] = std::exp(scores[j] - m_new);
    sum += scores[j];
  }
  state.l = state.l * correction + sum;
  state.m = m_new;
  return correction;
}

}  // namespace db::kernels

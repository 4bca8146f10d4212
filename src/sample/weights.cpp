#include "sample/weights.h"

namespace db {

double exp_weights(const float* logits, int32_t n, float max_logit, float inv_temperature, float* out) {
  for (int32_t i = 0; i < n; ++i) out[i] = exp_nonpositive((logits[i] - max_logit) * inv_temperature);
  double sums[4] = {0.0, 0.0, 0.0, 0.0};
  int32_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) sums[j] += out[i + j];
  for (; i < n; ++i) sums[0] += out[i];
  return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

double sum_exp_weights(const float* logits, int32_t n, float max_logit, float inv_temperature) {
  constexpr int32_t kChunk = 256;
  float chunk[kChunk];
  double sum = 0.0;
  for (int32_t begin = 0; begin < n; begin += kChunk) {
    const int32_t len = n - begin < kChunk ? n - begin : kChunk;
    sum += exp_weights(logits + begin, len, max_logit, inv_temperature, chunk);
  }
  return sum;
}

double gather_sum(const float* weights, const int32_t* ids, int32_t n) {
  double sum = 0.0;
  for (int32_t i = 0; i < n; ++i) sum += weights[ids[i]];
  return sum;
}

}  // namespace db

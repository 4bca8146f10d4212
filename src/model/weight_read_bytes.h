// Bytes of weights a model step reads, for the roofline gauge: every matrix once,
// except the token embedding (a step reads only its tokens' rows) unless it is
// also the output head, and the routed experts in proportion to the share a step
// of that many tokens is expected to touch.
#pragma once
#include <cstdint>

namespace db {

class ModelSource;
struct ModelConfig;

struct WeightReadBytes {
  int64_t dense = 0;           // read whole by every step
  int64_t routed_experts = 0;  // all routed experts' matrices, all layers
  int32_t n_experts = 0, n_experts_used = 0;

  // Expected bytes read by a step of `tokens` tokens: dense plus routed_experts
  // x (1 - (1 - used / n)^tokens), the share of experts that uniform routing
  // touches at least once.
  double per_step(int32_t tokens) const;
};

// From the tensor sizes as stored in the model's file(s) (the kernels may read a
// repacked copy of similar size).
WeightReadBytes weight_read_bytes(const ModelSource& src, const ModelConfig& config);

}  // namespace db

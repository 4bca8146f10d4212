// Multiply-accumulates of one token through a decoder, from its configuration:
// the matmuls every token runs (projections, feed-forward, routed experts) and
// the attention work it spends per context position. Their ratio is the prior
// of the scheduler's prefill cost (sched/prefill_cost.h).
#pragma once

#include "model/config.h"
#include "sched/prefill_cost.h"

namespace db {

struct ModelMacs {
  double linear_per_token = 0;        // all layers' matmuls for one token (the output head excluded:
                                      // only sampled rows run it)
  double attention_per_position = 0;  // all layers' q.k and p.v for one token and one context position
};

ModelMacs model_macs(const ModelConfig& mc);

// prefill_cost_from_macs of model_macs(mc).
PrefillCost prefill_cost_prior(const ModelConfig& mc);

}  // namespace db

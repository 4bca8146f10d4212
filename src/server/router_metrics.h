// The MoE router's Prometheus metrics, refreshed from EngineStats::router at
// scrape time: tokens routed per layer and expert, and the load imbalance
// (busiest expert / mean per expert, 1 = balanced) per MoE layer, its worst
// layer, and the worst layer of the last step. They live in a registry of
// their own that renders nothing for a model without a router, so a dense
// model's /metrics carries none of them, not even HELP lines. Under expert
// parallelism (RouterStats::expert_parallel_size > 1) they also carry each rank's
// load: the tokens routed to its experts (rank_routed_tokens), their share of all
// routed tokens, and the busiest rank / mean rank. Thread-safe.
#pragma once
#include <string>

#include "metrics/registry.h"
#include "model/router_stats.h"

namespace db::server {

class RouterMetrics {
 public:
  explicit RouterMetrics(std::string model_name);

  // The exposition text of the router metrics for `s`; "" when s is empty.
  std::string render(const RouterStats& s);

 private:
  // The per-rank series of `s` ("" unless its experts are split across ranks).
  std::string render_ranks(const RouterStats& s);

  std::string model_;
  metrics::Registry reg_;
  metrics::Family<metrics::Counter>& routed_;   // labels: model_name, layer, expert
  metrics::Family<metrics::Gauge>& imbalance_;  // labels: model_name, layer
  metrics::Gauge &imbalance_max_, &last_step_imbalance_max_;
  metrics::Registry ranks_reg_;                     // rendered under expert parallelism only
  metrics::Family<metrics::Counter>& rank_routed_;  // labels: model_name, rank
  metrics::Family<metrics::Gauge>& rank_share_;     // labels: model_name, rank
  metrics::Gauge& rank_imbalance_;
};

}  // namespace db::server

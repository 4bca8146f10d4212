// The MoE router's part of a benchmark report: what one run routed per MoE
// layer and expert, and a summary over the layers. Load imbalance = tokens on
// a layer's busiest expert / mean tokens per expert (model/router_stats.h).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/router_stats.h"

namespace db::bench {

struct RouterLayerReport {
  int layer = 0;
  int64_t routed_tokens = 0;              // summed over experts: n_experts_used per token the layer saw
  double imbalance = 0;                   // 0 when nothing was routed
  int busiest_expert = 0;                 // the lowest index among the busiest
  double busiest_share = 0;               // its tokens / routed_tokens
  std::vector<int64_t> tokens_per_expert;
};

struct RouterReport {
  int n_experts = 0;                       // 0: the model has no router (every other field is empty)
  int64_t steps = 0;                       // model steps that routed tokens
  std::vector<RouterLayerReport> layers;   // the MoE layers, ascending
  double imbalance_min = 0, imbalance_median = 0, imbalance_max = 0;  // over the layers (median interpolated)
  int busiest_layer = -1;                  // the layer whose busiest expert has the largest share (first on ties)
  int busiest_expert = -1;                 // that expert
  double busiest_share = 0;                // its share of the layer's routed tokens (1 / n_experts = even)

  bool empty() const { return n_experts == 0; }
};

// The report of `routed`: the router counts of the measured part of a run
// (router_stats_delta of the engine's stats after and before it).
RouterReport make_router_report(const RouterStats& routed);

// {"n_experts", "steps", "imbalance": {min, median, max}, "busiest": {layer, expert, share},
//  "layers": [{layer, routed_tokens, imbalance, busiest_expert, busiest_share, tokens_per_expert}]}.
nlohmann::json to_json(const RouterReport& r);

// A text table of runs' router summaries: the header once, then one row per run.
std::string router_table_header();
std::string router_table_row(int max_num_seqs, const char* phase, const RouterReport& r);

}  // namespace db::bench

// Router statistics of a mixture-of-experts model: how many tokens the router
// sent to each routed expert of each MoE layer since the model was loaded, and
// how uneven the last step was. The decoder records each MoE layer's counts
// after its forward; the engine snapshots the struct into EngineStats, which
// /metrics and `deepbatch bench` read.
//
// Load imbalance of a layer = tokens on its busiest expert / mean tokens per
// expert: 1 when the router spreads tokens evenly, n_experts when one expert
// takes them all. Each token counts once per expert chosen for it, so a MoE
// layer's counts sum to n_experts_used per token it saw.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace db {

// max / mean of `counts` (1 = balanced); 0 when it is empty or all zero.
double load_imbalance(std::span<const int64_t> counts);

struct RouterStats {
  int n_layers = 0;         // decoder layers, dense ones included (their rows stay zero)
  int first_moe_layer = 0;  // layers [first_moe_layer, n_layers) route tokens
  int n_experts = 0;        // routed experts per MoE layer; 0: no router (empty)
  int64_t steps = 0;        // forward calls that routed tokens (counted at the first MoE layer)
  int expert_parallel_size = 1;  // ranks the routed experts are split across (model/expert_shard.h)
  std::vector<int64_t> tokens;         // [n_layers][n_experts] tokens routed to each expert since start
  std::vector<double> last_imbalance;  // [n_layers] load_imbalance of the last step's counts (0: dense layer)

  RouterStats() = default;
  // All counts zero; first_moe_layer is clamped to [0, n_layers]; n_experts <= 0 gives an empty struct.
  RouterStats(int n_layers, int first_moe_layer, int n_experts);

  bool empty() const { return n_experts <= 0; }
  bool is_moe_layer(int layer) const { return !empty() && layer >= first_moe_layer && layer < n_layers; }

  // Adds one step's counts of MoE layer `layer` (n_experts values) and sets its
  // last_imbalance; the first MoE layer's call also counts a step. Allocates
  // nothing. Throws db::Error for a layer that is not a MoE layer or a count
  // of the wrong size.
  void record(int layer, std::span<const int64_t> counts);

  // Layer `layer`'s n_experts cumulative counts (all zero for a dense layer).
  std::span<const int64_t> layer_tokens(int layer) const;
  int64_t layer_total(int layer) const;
  // load_imbalance of the layer's cumulative counts.
  double imbalance(int layer) const { return load_imbalance(layer_tokens(layer)); }
};

// Tokens routed to each rank's experts, summed over the MoE layers: one value per
// rank of the expert-parallel split, rank r holding experts [r * n / E, (r + 1) * n / E)
// (make_expert_shard), so they sum to the tokens routed in all. One value (every
// expert) for an unsplit model; empty for empty stats.
std::vector<int64_t> rank_routed_tokens(const RouterStats& s);

// What was routed between two snapshots of the same model: after's counts and
// steps minus before's (an empty `before` counts as zeros); last_imbalance is
// after's. Throws db::Error when a non-empty `before` has another shape.
RouterStats router_stats_delta(const RouterStats& after, const RouterStats& before);

}  // namespace db

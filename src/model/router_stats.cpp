#include "model/router_stats.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "model/expert_shard.h"
#include "util/error.h"

namespace db {

double load_imbalance(std::span<const int64_t> counts) {
  if (counts.empty()) return 0.0;
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (total <= 0) return 0.0;
  const int64_t busiest = *std::max_element(counts.begin(), counts.end());
  return static_cast<double>(busiest) * static_cast<double>(counts.size()) / static_cast<double>(total);
}

RouterStats::RouterStats(int layers, int moe_from, int experts)
    : n_layers(std::max(layers, 0)),
      first_moe_layer(std::clamp(moe_from, 0, n_layers)),
      n_experts(std::max(experts, 0)) {
  if (empty()) return;
  tokens.assign(static_cast<size_t>(n_layers) * static_cast<size_t>(n_experts), 0);
  last_imbalance.assign(static_cast<size_t>(n_layers), 0.0);
}

void RouterStats::record(int layer, std::span<const int64_t> counts) {
  DB_CHECK(is_moe_layer(layer), "router stats: layer " + std::to_string(layer) + " routes no tokens");
  DB_CHECK(counts.size() == static_cast<size_t>(n_experts),
           "router stats: " + std::to_string(counts.size()) + " counts for " + std::to_string(n_experts) + " experts");
  int64_t* row = tokens.data() + static_cast<size_t>(layer) * static_cast<size_t>(n_experts);
  for (size_t e = 0; e < counts.size(); ++e) row[e] += counts[e];
  last_imbalance[static_cast<size_t>(layer)] = load_imbalance(counts);
  if (layer == first_moe_layer) ++steps;
}

std::span<const int64_t> RouterStats::layer_tokens(int layer) const {
  DB_CHECK(!empty() && layer >= 0 && layer < n_layers, "router stats: no layer " + std::to_string(layer));
  return {tokens.data() + static_cast<size_t>(layer) * static_cast<size_t>(n_experts), static_cast<size_t>(n_experts)};
}

int64_t RouterStats::layer_total(int layer) const {
  const std::span<const int64_t> row = layer_tokens(layer);
  return std::accumulate(row.begin(), row.end(), int64_t{0});
}

std::vector<int64_t> rank_routed_tokens(const RouterStats& s) {
  if (s.empty()) return {};
  std::vector<int64_t> per_rank(static_cast<size_t>(s.expert_parallel_size), 0);
  for (int r = 0; r < s.expert_parallel_size; ++r) {
    const ExpertShard shard = make_expert_shard(s.n_experts, r, s.expert_parallel_size);
    for (int layer = s.first_moe_layer; layer < s.n_layers; ++layer) {
      const std::span<const int64_t> row = s.layer_tokens(layer);
      per_rank[static_cast<size_t>(r)] += std::accumulate(row.begin() + shard.begin, row.begin() + shard.end, int64_t{0});
    }
  }
  return per_rank;
}

RouterStats router_stats_delta(const RouterStats& after, const RouterStats& before) {
  RouterStats d = after;
  if (before.empty()) return d;
  if (before.n_layers != after.n_layers || before.first_moe_layer != after.first_moe_layer ||
      before.n_experts != after.n_experts)
    throw Error("router stats: the two snapshots come from models of different shapes");
  for (size_t i = 0; i < d.tokens.size(); ++i) d.tokens[i] -= before.tokens[i];
  d.steps -= before.steps;
  return d;
}

}  // namespace db

#include "offline_bench/router_report.h"

#include <algorithm>
#include <cstdio>

#include "offline_bench/latency_summary.h"

namespace db::bench {

namespace {

RouterLayerReport layer_report(const RouterStats& s, int layer) {
  RouterLayerReport l;
  l.layer = layer;
  const std::span<const int64_t> tokens = s.layer_tokens(layer);
  l.tokens_per_expert.assign(tokens.begin(), tokens.end());
  l.routed_tokens = s.layer_total(layer);
  l.imbalance = load_imbalance(tokens);
  l.busiest_expert = static_cast<int>(std::max_element(tokens.begin(), tokens.end()) - tokens.begin());
  if (l.routed_tokens > 0)
    l.busiest_share = static_cast<double>(tokens[static_cast<size_t>(l.busiest_expert)]) /
                      static_cast<double>(l.routed_tokens);
  return l;
}

}  // namespace

RouterReport make_router_report(const RouterStats& routed) {
  RouterReport r;
  if (routed.empty()) return r;
  r.n_experts = routed.n_experts;
  r.steps = routed.steps;
  std::vector<double> imbalances;
  for (int layer = routed.first_moe_layer; layer < routed.n_layers; ++layer) {
    r.layers.push_back(layer_report(routed, layer));
    const RouterLayerReport& l = r.layers.back();
    imbalances.push_back(l.imbalance);
    if (l.busiest_share > r.busiest_share) {
      r.busiest_share = l.busiest_share;
      r.busiest_layer = l.layer;
      r.busiest_expert = l.busiest_expert;
    }
  }
  const LatencySummary over_layers = summarize(std::move(imbalances));
  r.imbalance_min = over_layers.min;
  r.imbalance_median = over_layers.p50;
  r.imbalance_max = over_layers.max;
  return r;
}

nlohmann::json to_json(const RouterReport& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const RouterLayerReport& l : r.layers)
    layers.push_back({{"layer", l.layer},
                      {"routed_tokens", l.routed_tokens},
                      {"imbalance", l.imbalance},
                      {"busiest_expert", l.busiest_expert},
                      {"busiest_share", l.busiest_share},
                      {"tokens_per_expert", l.tokens_per_expert}});
  return {{"n_experts", r.n_experts},
          {"steps", r.steps},
          {"imbalance", {{"min", r.imbalance_min}, {"median", r.imbalance_median}, {"max", r.imbalance_max}}},
          {"busiest", {{"layer", r.busiest_layer}, {"expert", r.busiest_expert}, {"share", r.busiest_share}}},
          {"layers", std::move(layers)}};
}

std::string router_table_header() {
  char line[256];
  std::snprintf(line, sizeof line, "%6s %-7s %7s %18s %26s  %s\n", "seqs", "phase", "steps", "layers x experts",
                "imbalance min/median/max", "busiest expert: share of its layer's tokens (even share)");
  return "MoE router (imbalance = tokens on a layer's busiest expert / mean per expert; 1 = balanced)\n" +
         std::string(line);
}

std::string router_table_row(int max_num_seqs, const char* phase, const RouterReport& r) {
  char shape[32], imbalance[64], busiest[96] = "-";
  std::snprintf(shape, sizeof shape, "%zu x %d", r.layers.size(), r.n_experts);
  std::snprintf(imbalance, sizeof imbalance, "%.2f/%.2f/%.2f", r.imbalance_min, r.imbalance_median,
                r.imbalance_max);
  if (r.busiest_layer >= 0)
    std::snprintf(busiest, sizeof busiest, "layer %d expert %d: %.1f%% (%.1f%%)", r.busiest_layer, r.busiest_expert,
                  r.busiest_share * 100, 100.0 / r.n_experts);
  char line[256];
  std::snprintf(line, sizeof line, "%6d %-7s %7lld %18s %26s  %s\n", max_num_seqs, phase,
                static_cast<long long>(r.steps), shape, imbalance, busiest);
  return line;
}

}  // namespace db::bench

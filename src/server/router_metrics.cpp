#include "server/router_metrics.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace db::server {

RouterMetrics::RouterMetrics(std::string model_name)
    : model_(std::move(model_name)),
      routed_(reg_.counter("deepbatch:moe_routed_tokens_total",
                           "Tokens the router sent to each routed expert of each MoE layer since the model was "
                           "loaded (a token counts once per expert chosen for it).",
                           {"model_name", "layer", "expert"})),
      imbalance_(reg_.gauge("deepbatch:moe_expert_load_imbalance",
                            "Per MoE layer: tokens routed to its busiest expert / mean tokens per expert, since the "
                            "model was loaded (1 = balanced, n_experts = all on one expert).",
                            {"model_name", "layer"})),
      imbalance_max_(reg_.gauge("deepbatch:moe_expert_load_imbalance_max",
                                "The largest deepbatch:moe_expert_load_imbalance over the MoE layers.", {"model_name"})
                         .labels({model_})),
      last_step_imbalance_max_(reg_.gauge("deepbatch:moe_last_step_load_imbalance_max",
                                          "The largest load imbalance over the MoE layers in the last model step "
                                          "alone (small steps are uneven by nature: one token uses n_experts_used "
                                          "experts).",
                                          {"model_name"})
                                   .labels({model_})),
      rank_routed_(ranks_reg_.counter("deepbatch:expert_parallel_rank_routed_tokens_total",
                                      "Tokens the router sent to the routed experts each expert-parallel rank holds, "
                                      "summed over the MoE layers, since the model was loaded.",
                                      {"model_name", "rank"})),
      rank_share_(ranks_reg_.gauge("deepbatch:expert_parallel_rank_load_share",
                                   "Each expert-parallel rank's share of the routed tokens since the model was "
                                   "loaded (1 / ranks = balanced).",
                                   {"model_name", "rank"})),
      rank_imbalance_(ranks_reg_.gauge("deepbatch:expert_parallel_load_imbalance",
                                       "Routed tokens of the busiest expert-parallel rank / mean per rank, since "
                                       "the model was loaded (1 = balanced).",
                                       {"model_name"})
                          .labels({model_})) {}

std::string RouterMetrics::render(const RouterStats& s) {
  if (s.empty()) return "";
  double worst = 0, worst_last = 0;
  for (int layer = s.first_moe_layer; layer < s.n_layers; ++layer) {
    const std::string l = std::to_string(layer);
    const std::span<const int64_t> tokens = s.layer_tokens(layer);
    for (int e = 0; e < s.n_experts; ++e)
      routed_.labels({model_, l, std::to_string(e)}).raise_to(static_cast<double>(tokens[static_cast<size_t>(e)]));
    const double imbalance = load_imbalance(tokens);
    imbalance_.labels({model_, l}).set(imbalance);
    worst = std::max(worst, imbalance);
    worst_last = std::max(worst_last, s.last_imbalance[static_cast<size_t>(layer)]);
  }
  imbalance_max_.set(worst);
  last_step_imbalance_max_.set(worst_last);
  return reg_.render() + render_ranks(s);
}

std::string RouterMetrics::render_ranks(const RouterStats& s) {
  if (s.expert_parallel_size <= 1) return "";
  const std::vector<int64_t> per_rank = rank_routed_tokens(s);
  const double total = static_cast<double>(std::accumulate(per_rank.begin(), per_rank.end(), int64_t{0}));
  for (size_t r = 0; r < per_rank.size(); ++r) {
    const std::string rank = std::to_string(r);
    const double tokens = static_cast<double>(per_rank[r]);
    rank_routed_.labels({model_, rank}).raise_to(tokens);
    rank_share_.labels({model_, rank}).set(total > 0 ? tokens / total : 0.0);
  }
  rank_imbalance_.set(load_imbalance(per_rank));
  return ranks_reg_.render();
}

}  // namespace db::server

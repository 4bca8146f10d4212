#include "server/router_metrics.h"

#include <algorithm>

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
  return reg_.render();
}

}  // namespace db::server

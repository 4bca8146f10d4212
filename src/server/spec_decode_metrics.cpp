#include "server/spec_decode_metrics.h"

namespace db::server {

namespace {

const std::vector<std::string> kLabels = {"model_name", "proposer"};

}  // namespace

SpecDecodeMetrics::SpecDecodeMetrics(std::string model_name, MetricNaming naming)
    : model_(std::move(model_name)),
      drafts_(reg_.counter(exported_names("deepbatch:spec_decode_num_drafts_total", naming),
                           "Speculative decoding: verifications (one sequence's draft tokens in one step).", kLabels)),
      draft_tokens_(reg_.counter(exported_names("deepbatch:spec_decode_num_draft_tokens_total", naming),
                                 "Speculative decoding: draft tokens verified.", kLabels)),
      accepted_(reg_.counter(exported_names("deepbatch:spec_decode_num_accepted_tokens_total", naming),
                             "Speculative decoding: draft tokens accepted.", kLabels)),
      emitted_(reg_.counter("deepbatch:spec_decode_num_emitted_tokens_total",
                            "Speculative decoding: tokens emitted by verifying steps (accepted drafts plus one "
                            "token of the target's own per verification).",
                            kLabels)),
      paused_(reg_.counter("deepbatch:spec_decode_paused_total",
                           "Speculative decoding: decode steps of a sequence that drafted nothing because its "
                           "acceptance rate and the step's cost said drafts would not pay.",
                           kLabels)),
      accepted_per_pos_(reg_.counter(exported_names("deepbatch:spec_decode_num_accepted_tokens_per_pos_total", naming),
                                     "Speculative decoding: verifications whose draft token at this position "
                                     "(0 = first) was accepted.",
                                     {"model_name", "proposer", "position"})),
      acceptance_rate_(reg_.gauge("deepbatch:spec_decode_acceptance_rate",
                                  "Speculative decoding: accepted / verified draft tokens since start.", kLabels)),
      mean_length_(reg_.gauge("deepbatch:spec_decode_mean_accepted_length",
                              "Speculative decoding: tokens emitted per verification since start (1 + accepted "
                              "drafts).",
                              kLabels)),
      cost_ratio_(reg_.gauge("deepbatch:spec_decode_cost_ratio",
                             "Speculative decoding: the latest measured marginal cost of a draft token over the "
                             "step's cost per token (drafts pay while acceptance^position exceeds it).",
                             kLabels)) {}

std::string SpecDecodeMetrics::render(const SpecDecodeStats& s) {
  if (s.proposer.empty()) return {};
  const std::vector<std::string> l = {model_, s.proposer};
  drafts_.labels(l).raise_to(static_cast<double>(s.num_drafts));
  draft_tokens_.labels(l).raise_to(static_cast<double>(s.num_draft_tokens));
  accepted_.labels(l).raise_to(static_cast<double>(s.num_accepted_tokens));
  emitted_.labels(l).raise_to(static_cast<double>(s.num_emitted_tokens));
  paused_.labels(l).raise_to(static_cast<double>(s.paused));
  for (size_t p = 0; p < s.accepted_per_position.size(); ++p)
    accepted_per_pos_.labels({model_, s.proposer, std::to_string(p)})
        .raise_to(static_cast<double>(s.accepted_per_position[p]));
  acceptance_rate_.labels(l).set(s.acceptance_rate());
  mean_length_.labels(l).set(s.mean_accepted_length());
  cost_ratio_.labels(l).set(s.cost_ratio);
  return reg_.render();
}

}  // namespace db::server

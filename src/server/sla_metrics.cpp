#include "server/sla_metrics.h"

#include "server/metric_names.h"

namespace db::server {

SlaMetrics::SlaMetrics(std::string model_name)
    : model_(std::move(model_name)),
      enabled_(on_reg_.gauge("deepbatch:sla_controller_enabled", "1 when the SLA controller tunes the batch.", kModelLabel)
                   .labels({model_})),
      target_(reg_.gauge("deepbatch:sla_target_seconds", "The SLA controller's latency targets (p99).",
                         {"model_name", "metric"})),
      observed_(reg_.gauge("deepbatch:sla_observed_seconds",
                           "The SLA controller's latest window: TPOT estimate and TTFT p99 (engine side).",
                           {"model_name", "metric"})),
      step_tokens_(reg_.gauge("deepbatch:sla_step_token_budget", "Tokens per step the SLA controller allows.", kModelLabel)
                       .labels({model_})),
      max_running_(reg_.gauge("deepbatch:sla_running_cap", "Running sequences the SLA controller allows.", kModelLabel)
                       .labels({model_})),
      tokens_per_s_(reg_.gauge("deepbatch:sla_window_tokens_per_second",
                               "Tokens computed per second in the SLA controller's latest window.", kModelLabel)
                        .labels({model_})),
      decisions_(reg_.counter("deepbatch:sla_decisions_total", "SLA controller windows by the action taken.",
                              {"model_name", "action"})) {}

std::string SlaMetrics::render(const SlaControllerSnapshot& s) {
  enabled_.set(s.enabled ? 1 : 0);
  if (!s.enabled) return on_reg_.render();
  target_.labels({model_, "tpot_p99"}).set(s.targets.tpot_p99_s);
  target_.labels({model_, "ttft_p99"}).set(s.targets.ttft_p99_s);
  observed_.labels({model_, "tpot"}).set(s.tpot_estimate_s);
  observed_.labels({model_, "ttft_p99"}).set(s.ttft_p99_s);
  step_tokens_.set(s.settings.step_tokens);
  max_running_.set(s.settings.max_running);
  tokens_per_s_.set(s.tokens_per_s);
  for (int a = 0; a < kNumSlaActions; ++a)
    decisions_.labels({model_, std::string(sla_action_name(static_cast<SlaAction>(a)))})
        .raise_to(static_cast<double>(s.decisions[a]));
  return on_reg_.render() + reg_.render();
}

}  // namespace db::server

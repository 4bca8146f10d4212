#include "engine/sla_loop.h"

#include <algorithm>

#include "sched/budget_split.h"

namespace db {

SlaLoop::SlaLoop(SlaControllerConfig cfg, int32_t long_prefill_threshold, int32_t block_size)
    : ctl_(std::move(cfg)), long_prefill_threshold_(long_prefill_threshold), block_size_(block_size) {}

void SlaLoop::observe(const SchedulerOutput& so, const StepComposition& comp, const std::vector<RequestOutput>& outs,
                      double done, double seconds, int32_t waiting) {
  for (const RequestOutput& o : outs) {
    if (o.new_tokens.empty()) continue;
    const StepComposition::Sampling* it = comp.find_sampling(o.id);
    int32_t outputs = static_cast<int32_t>(o.new_tokens.size());
    if (it) {
      outputs += it->outputs_before;
      if (it->outputs_before == 0 && o.id == o.group_id) ctl_.observe_ttft(done - it->arrival_time);
    }
    const auto [first, fresh] = first_token_at_.try_emplace(o.id, done);
    if (is_finished(o.status)) {
      // A fork's count before the step is unknown here: only sequences seen sampling count.
      if (!fresh && it && outputs > 1) ctl_.observe_tpot((done - first->second) / (outputs - 1));
      first_token_at_.erase(first);
    }
  }
  SlaStepSample step;
  step.seconds = seconds;
  step.tokens = so.total_num_scheduled_tokens;
  step.prompt_tokens = comp.prompt_tokens;
  step.sequences = static_cast<int32_t>(so.scheduled_running.size() + so.scheduled_new.size());
  step.decodes = comp.decodes;
  step.waiting = waiting;
  step.prompts_cut = comp.prompts_cut;
  ctl_.observe_step(done, step);
}

std::optional<SlaDecision> SlaLoop::decide(double now) {
  if (!ctl_.window_complete(now)) return std::nullopt;
  return ctl_.decide(now);
}

StepLimits SlaLoop::step_limits() const {
  const SlaSettings& s = ctl_.settings();
  const int32_t long_threshold = long_prefill_threshold_ > 0
                                     ? std::min(long_prefill_threshold_, s.step_tokens)
                                     : auto_long_prefill_threshold(s.step_tokens, block_size_);
  return {s.step_tokens, long_threshold, s.max_running};
}

}  // namespace db

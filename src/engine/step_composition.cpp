#include "engine/step_composition.h"

#include <algorithm>

namespace db {

const StepComposition::Sampling* StepComposition::find_sampling(RequestId id) const {
  const auto it = std::lower_bound(sampling.begin(), sampling.end(), id,
                                   [](const Sampling& s, RequestId key) { return s.id < key; });
  return it != sampling.end() && it->id == id ? &*it : nullptr;
}

StepComposition describe_step(const SchedulerOutput& so, const Scheduler& sched, bool with_sampling) {
  StepComposition c;
  for (const auto* list : {&so.scheduled_running, &so.scheduled_new}) {
    for (const ScheduledRequest& r : *list) {
      c.context_tokens += r.num_computed_tokens + r.num_scheduled_tokens;
      const Request* q = sched.find(r.id);
      if (!q) continue;
      c.prompt_tokens += std::clamp(q->num_prompt_tokens - r.num_computed_tokens, 0, r.num_scheduled_tokens);
      if (r.num_computed_tokens + r.num_scheduled_tokens < q->num_prompt_tokens) ++c.prompts_cut;
      if (r.num_samples == 0) continue;
      if (q->num_output_tokens() > 0) ++c.decodes;
      if (with_sampling) c.sampling.push_back({r.id, q->arrival_time, q->num_output_tokens()});
    }
  }
  std::sort(c.sampling.begin(), c.sampling.end(),
            [](const StepComposition::Sampling& a, const StepComposition::Sampling& b) { return a.id < b.id; });
  return c;
}

}  // namespace db

// Scheduler: the step's token budget and, in interactive steps, which less
// urgent running sequences share the interactive allowance.

#include "sched/scheduler.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace db {

StepBudget Scheduler::plan_budget() const {
  int32_t running_short = 0, running_long = 0;
  for (const Request* r : running_) {
    const int32_t uncomputed = r->num_uncomputed_tokens();
    if (StepBudget::is_short(uncomputed, r->num_computed_tokens, limits_, cfg_.prefill_cost)) {
      running_short += uncomputed;
    } else {
      ++running_long;
    }
  }
  const int32_t room = step_tokens_ - running_short - running_long * limits_.shared_threshold;
  int32_t waiting_short = 0, seqs = num_running_seqs();
  bool short_waiting = false;
  waiting_.visit_in_order([&](const Request& w) {
    if (!StepBudget::is_short(w.num_tokens(), 0, limits_, cfg_.prefill_cost) ||
        (seqs > 0 && seqs + w.num_samples > max_running()))
      return false;
    short_waiting = true;
    if (waiting_short + w.num_tokens() > room) return false;
    waiting_short += w.num_tokens();
    seqs += w.num_samples;
    return true;
  });
  return StepBudget(step_tokens_, limits_, running_short + waiting_short, running_short > 0 || short_waiting,
                    cfg_.prefill_cost);
}

bool Scheduler::interactive_step() {
  if (cfg_.interactive_step_tokens <= 0) return false;
  const bool urgent_work = (!running_.empty() && running_.front()->priority == 0) ||
                           (!waiting_.empty() && waiting_.front()->priority == 0 && admission_open());
  if (urgent_work) interactive_until_ = now_ + cfg_.interactive_hold_s;
  return urgent_work || now_ < interactive_until_;
}

std::vector<const Request*> Scheduler::interactive_allowance() const {
  // Decodes first, the one that waited longest first (so none starves while the
  // cap lasts); then prompt chunks in service order (first come first served, so
  // prompts finish, and fill prefix-cache blocks, one after another).
  std::vector<const Request*> lower, prompts;
  for (const Request* r : running_)
    if (r->priority > 0) (r->num_uncomputed_tokens() == 1 ? lower : prompts).push_back(r);
  std::stable_sort(lower.begin(), lower.end(),
                   [](const Request* a, const Request* b) { return a->last_step < b->last_step; });
  lower.insert(lower.end(), prompts.begin(), prompts.end());
  std::vector<const Request*> allowed;
  int32_t tokens = 0;
  for (const Request* r : lower) {
    const int32_t t = std::min(r->num_uncomputed_tokens(), cfg_.interactive_step_tokens);
    if (tokens + t > cfg_.interactive_step_tokens) break;
    tokens += t;
    allowed.push_back(r);
  }
  return allowed;
}

}  // namespace db

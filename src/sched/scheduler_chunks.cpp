// Scheduler: hands the step's budget out as chunks, to the running sequences
// first, then to the waiting ones it admits, and records each chunk in the step's output.

#include "sched/scheduler.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sched/admission_reservation.h"
#include "util/error.h"

namespace db {

namespace {
// The runner scores the prompt of a group's first sequence only (forks share its prompt).
bool scores_prompt(const Request& r) { return r.sampling.prompt_logprobs.has_value() && r.id == r.group_id; }

}  // namespace

bool Scheduler::schedule_running(SchedulerOutput& out, StepBudget& budget) {
  const size_t preempted_before = out.preempted_ids.size();
  const bool interactive = interactive_left_ < std::numeric_limits<int32_t>::max();
  const std::vector<const Request*> allowed = interactive ? interactive_allowance() : std::vector<const Request*>{};
  for (size_t i = 0; i < running_.size() && budget.left() > 0;) {
    Request& r = *running_[i];
    const int32_t uncomputed = r.num_uncomputed_tokens();
    DB_CHECK(uncomputed > 0, "running sequence " + std::to_string(r.id) + " has no token to compute");
    if (interactive && r.priority > 0 && std::find(allowed.begin(), allowed.end(), &r) == allowed.end()) {
      ++i;  // sits out this interactive step
      continue;
    }
    const int32_t offered = budget.offer(uncomputed, r.num_computed_tokens);
    const int32_t n = cap_scored_rows(r, r.priority > 0 ? std::min(offered, interactive_left_) : offered);
    if (n == 0) {  // a long prompt behind short work that takes the rest of the budget (or of the scored rows)
      ++i;
      continue;
    }
    const StepBudget budget_before = budget;
    const int32_t interactive_before = interactive_left_;
    if (r.priority > 0 && interactive) interactive_left_ -= n;
    budget.take(uncomputed, r.num_computed_tokens, n);
    std::vector<int32_t> drafts = std::move(r.draft_tokens);
    r.draft_tokens.clear();
    std::optional<AllocResult> alloc;
    if (!drafts.empty() && uncomputed == 1) {
      const bool capped = r.priority > 0 && interactive;
      drafts.resize(static_cast<size_t>(usable_drafts(r, static_cast<int32_t>(drafts.size()),
                                                      capped ? std::min(budget.spare(), interactive_left_)
                                                             : budget.spare())));
      if (!drafts.empty()) alloc = allocate_drafts(r, n, static_cast<int32_t>(drafts.size()));
      if (!alloc) drafts.clear();  // drafts never preempt anyone: without room, a plain decode
      const auto k = static_cast<int32_t>(drafts.size());
      budget.take_spare(k);
      if (capped) interactive_left_ -= k;
    } else {
      drafts.clear();
    }
    if (!alloc) alloc = allocate_or_preempt(r, n, i, out);
    if (!alloc) {  // r preempted itself; running_[i] is now the sequence after it, which gets r's tokens
      budget = budget_before;
      interactive_left_ = interactive_before;
      continue;
    }
    const auto k = static_cast<int32_t>(drafts.size());
    record(r, n + k, std::move(*alloc), out, false, 0, std::move(drafts));
    ++i;
  }
  return out.preempted_ids.size() > preempted_before;
}

void Scheduler::schedule_waiting(SchedulerOutput& out, StepBudget& budget) {
  budget.drop_reservation();  // admission is FIFO: the reserved short prompts come first
  int64_t outstanding = reserving() ? outstanding_blocks(running_, cfg_, kv_) : 0;
  while (!waiting_.empty() && budget.left() > 0) {
    Request& r = *waiting_.front();
    if (!fits_slots(r.num_samples)) break;
    if (r.priority > 0 && interactive_left_ == 0) break;  // an interactive step has no room left for it
    // Prompt logprobs need every prompt position computed: no prefix-cache hit.
    const ComputedBlocks hit =
        r.sampling.prompt_logprobs ? ComputedBlocks{} : kv_.get_computed_blocks(r.id, r.tokens);
    const int32_t uncomputed = r.num_tokens() - hit.num_computed_tokens;
    const int32_t offer = budget.offer(uncomputed, hit.num_computed_tokens);
    const int32_t offered = r.priority > 0 ? std::min(offer, interactive_left_) : offer;
    const int32_t n = cap_scored_rows(r, offered);
    if (n == 0 && offered > 0) break;  // the step scores as many prompt positions as it may; wait for the next
    SlotRequest slots;
    slots.tokens = r.tokens;
    slots.num_new_tokens = n;
    slots.prefix_hit = &hit;
    slots.reserve_blocks = reserve_for(r);
    slots.exempt = runs_alone(r);
    if (reserving() && !runs_alone(r) &&
        kv_.num_allocatable_blocks() < admission_blocks(r, hit, cfg_, kv_) + outstanding + slots.reserve_blocks)
      break;  // its reservation does not fit beside the running sequences' (a lone one is exempt)
    std::optional<AllocResult> alloc = kv_.allocate_slots(r.id, slots);
    if (!alloc) break;
    waiting_.pop_front();
    const bool first = r.status == RequestStatus::Waiting;
    if (first) r.num_cached_tokens = hit.num_computed_tokens;
    counters_.cached_prompt_tokens += std::min(hit.num_computed_tokens, r.num_prompt_tokens);
    r.num_computed_tokens = hit.num_computed_tokens;
    r.status = RequestStatus::Running;
    insert_running(&r);
    record(r, n, std::move(*alloc), out, first, hit.num_computed_tokens);
    if (reserving()) outstanding += lacking_blocks(r, cfg_, kv_);
    budget.take(uncomputed, hit.num_computed_tokens, n);
    if (r.priority > 0 && interactive_left_ != std::numeric_limits<int32_t>::max()) interactive_left_ -= n;
  }
}

int32_t Scheduler::cap_scored_rows(const Request& r, int32_t n) const {
  if (!scores_prompt(r) || r.num_computed_tokens >= r.num_prompt_tokens) return n;
  return std::min(n, scored_rows_left_);
}

void Scheduler::record(Request& r, int32_t n, AllocResult alloc, SchedulerOutput& out, bool first_admission,
                       int32_t num_cached_tokens, std::vector<int32_t> drafts) {
  if (scores_prompt(r))
    scored_rows_left_ -= std::max(0, std::min(r.num_computed_tokens + n, r.num_prompt_tokens) - r.num_computed_tokens);
  ScheduledRequest s;
  s.id = r.id;
  s.num_computed_tokens = r.num_computed_tokens;
  s.num_scheduled_tokens = n;
  const int32_t num_drafts = static_cast<int32_t>(drafts.size());
  s.num_samples = r.num_computed_tokens + n - num_drafts == r.num_tokens() ? r.num_samples : 0;
  s.draft_tokens = std::move(drafts);
  s.block_ids = kv_.block_table(r.id);
  s.new_block_ids = std::move(alloc.new_blocks);
  out.block_copies.insert(out.block_copies.end(), alloc.copies.begin(), alloc.copies.end());

  const int32_t begin = r.num_computed_tokens, end = begin + n;
  counters_.prompt_tokens_computed += std::max(0, std::min(end, r.num_prompt_tokens) - begin);
  counters_.output_tokens_recomputed +=
      std::max(0, std::min(end - num_drafts, r.num_tokens() - 1) - std::max(begin, r.num_prompt_tokens));

  if (!r.runner_knows) {
    NewRequestData d;
    d.tokens = r.tokens;
    d.num_prompt_tokens = r.num_prompt_tokens;
    d.sampling = r.sampling;
    d.sampler_state = r.sampler_state;
    d.group_id = r.group_id;
    d.first_admission = first_admission;
    d.num_cached_tokens = num_cached_tokens;
    s.new_data = std::move(d);
    out.scheduled_new.push_back(std::move(s));
  } else {
    out.scheduled_running.push_back(std::move(s));
  }
  r.runner_knows = true;
  r.num_computed_tokens = end;
  r.last_step = counters_.steps;
  out.total_num_scheduled_tokens += n;
}

}  // namespace db

// Scheduler: preemption by recompute, for an urgent request, the running cap, or a
// sequence whose blocks cannot grow.

#include "sched/scheduler.h"

#include <algorithm>
#include <optional>
#include <span>

#include "sched/admission_reservation.h"
#include "sched/preemption_policy.h"
#include "util/error.h"

namespace db {

void Scheduler::make_room_for_urgent(SchedulerOutput& out) {
  if (waiting_.empty()) return;
  const Request& w = *waiting_.front();
  const int32_t first_chunk = chunk_tokens(w.num_tokens(), step_tokens_, limits_.long_threshold);
  const int64_t blocks =
      reserving() ? committed_blocks(w, cfg_) : (first_chunk + cfg_.block_size - 1) / cfg_.block_size;
  while (!running_.empty()) {
    const int64_t others = reserving() ? outstanding_blocks(running_, cfg_, kv_) : 0;
    const bool fits = fits_slots(w.num_samples) &&
                      kv_.num_allocatable_blocks(runs_alone(w)) >= blocks + others + reserve_for(w);
    const size_t victim = choose_victim(cfg_.admission, running_);
    if (fits || !may_preempt_for_admission(w, *running_[victim])) return;
    preempt(victim, out);
  }
}

void Scheduler::enforce_running_cap(SchedulerOutput& out) {
  const int32_t cap = mem_.max_running > 0 ? std::min(mem_.max_running, cfg_.max_num_seqs) : cfg_.max_num_seqs;
  while (running_.size() > 1 && num_running_seqs() > cap) preempt(choose_victim(cfg_.admission, running_), out);
}

std::optional<AllocResult> Scheduler::allocate_or_preempt(Request& r, int32_t n, size_t index,
                                                          SchedulerOutput& out) {
  SlotRequest slots;
  slots.tokens = r.tokens;
  slots.num_computed_tokens = r.num_computed_tokens;
  slots.num_new_tokens = n;
  slots.reserve_blocks = reserve_for(r);
  for (;;) {
    slots.exempt = runs_alone(r);  // preempting others may leave r alone
    std::optional<AllocResult> alloc = kv_.allocate_slots(r.id, slots);
    if (alloc) return alloc;
    // Reserve chooses among the sequences this step has not scheduled yet (r
    // included); FirstChunk's victim, the one that runs last, always is one of them.
    const std::span<Request* const> unscheduled(running_.data() + index, running_.size() - index);
    const size_t victim = reserving() ? index + choose_least_recompute_victim(unscheduled)
                                      : choose_preemption_victim(running_);
    DB_CHECK(victim >= index, "the preemption victim was already scheduled in this step");
    const bool self = running_[victim] == &r;
    preempt(victim, out);
    if (self) return std::nullopt;
  }
}

void Scheduler::preempt(size_t running_index, SchedulerOutput& out) {
  Request& r = *running_[running_index];
  kv_.free(r.id);
  r.num_computed_tokens = 0;
  r.draft_tokens.clear();
  r.status = RequestStatus::Preempted;
  r.runner_knows = false;
  ++r.num_preemptions;
  ++counters_.preemptions;
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(running_index));
  waiting_.push_front(&r);
  out.preempted_ids.push_back(r.id);
}

}  // namespace db

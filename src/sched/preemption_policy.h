// Which running sequence gives up its KV blocks when a running sequence cannot
// grow, or when a more urgent request or the memory guard needs room.
#pragma once
#include <cstddef>
#include <span>

#include "sched/request.h"
#include "sched/scheduler_config.h"

namespace db {

// AdmissionPolicy::FirstChunk: the one that runs last in service order (the least
// urgent class, and in it the newest arrival), which loses the least progress that
// others wait on. Index of the victim in `running` (non-empty; any order).
size_t choose_preemption_victim(std::span<Request* const> running);

// AdmissionPolicy::Reserve: in the least urgent class, the sequence with the fewest
// computed tokens, the work its recompute repeats (the one that runs last among
// equals). Progress is not lost to spare a newer arrival: preempting a sequence near
// its end throws away a whole prompt's compute, and brings it back sooner.
size_t choose_least_recompute_victim(std::span<Request* const> running);

// The victim `policy` chooses.
size_t choose_victim(AdmissionPolicy policy, std::span<Request* const> running);

// Whether a waiting request that does not fit may preempt a running one to get
// in: only a strictly more urgent class (lower priority value) may.
inline bool may_preempt_for_admission(const Request& waiting, const Request& victim) {
  return waiting.priority < victim.priority;
}

}  // namespace db

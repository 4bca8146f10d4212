// Which running sequence gives up its KV blocks when a running sequence cannot
// grow: the one that runs last in service order (the least urgent class, and
// in it the newest arrival), which loses the least progress that others wait on.
#pragma once
#include <cstddef>
#include <span>

#include "sched/request.h"

namespace db {

// Index of the victim in `running` (non-empty; any order).
size_t choose_preemption_victim(std::span<Request* const> running);

// Whether a waiting request that does not fit may preempt a running one to get
// in: only a strictly more urgent class (lower priority value) may.
inline bool may_preempt_for_admission(const Request& waiting, const Request& victim) {
  return waiting.priority < victim.priority;
}

}  // namespace db

#include "sched/preemption_policy.h"

#include "sched/request_order.h"
#include "util/error.h"

namespace db {

size_t choose_preemption_victim(std::span<Request* const> running) {
  DB_CHECK(!running.empty(), "no running sequence to preempt");
  size_t victim = 0;
  for (size_t i = 1; i < running.size(); ++i)
    if (runs_before(*running[victim], *running[i])) victim = i;
  return victim;
}

}  // namespace db

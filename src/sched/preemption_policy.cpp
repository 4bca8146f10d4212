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

size_t choose_least_recompute_victim(std::span<Request* const> running) {
  DB_CHECK(!running.empty(), "no running sequence to preempt");
  const auto better_victim = [](const Request& a, const Request& b) {  // a rather than b
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.num_computed_tokens != b.num_computed_tokens) return a.num_computed_tokens < b.num_computed_tokens;
    return runs_before(b, a);
  };
  size_t victim = 0;
  for (size_t i = 1; i < running.size(); ++i)
    if (better_victim(*running[i], *running[victim])) victim = i;
  return victim;
}

size_t choose_victim(AdmissionPolicy policy, std::span<Request* const> running) {
  return policy == AdmissionPolicy::Reserve ? choose_least_recompute_victim(running)
                                            : choose_preemption_victim(running);
}

}  // namespace db

// Scheduler: ends sequences, on request, at a stop, or past a time limit.

#include "sched/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "sched/request_order.h"
#include "util/error.h"

namespace db {

namespace {
std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

}  // namespace

std::vector<RequestId> Scheduler::finish_requests(std::span<const RequestId> ids, RequestStatus status) {
  DB_CHECK(is_finished(status), "finish_requests needs a finished status");
  std::vector<RequestId> done;
  for (RequestId id : ids) {
    Request* r = find_mutable(id);
    if (!r) continue;
    finish(*r, status);
    done.push_back(id);
  }
  return done;
}

std::vector<RequestId> Scheduler::finish_group(RequestId group_id, RequestStatus status) {
  std::vector<RequestId> ids;
  for (const auto& [id, r] : requests_)
    if (r->group_id == group_id) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return finish_requests(ids, status);
}

std::vector<EndedRequest> Scheduler::enforce_time_limits(double now) {
  now_ = now;
  std::vector<EndedRequest> ended;
  const bool queue_limits = std::any_of(cfg_.max_queue_wait.begin(), cfg_.max_queue_wait.end(),
                                        [](double w) { return w > 0; });
  if (!queue_limits && deadline_requests_ == 0) return ended;  // nothing to check: skip the scan
  std::vector<Request*> promote;
  std::set<RequestId> expired;  // groups past their deadline (a fork carries it too, its parent may be gone)
  for (const auto& [id, r] : requests_) {
    if (r->deadline > 0 && now >= r->deadline) {
      if (expired.insert(r->group_id).second)
        ended.push_back({r->group_id, RequestStatus::FinishedTimeout,
                         "the request's deadline of " + format_seconds(r->deadline - r->arrival_time) + " passed"});
      continue;
    }
    if (r->id != r->group_id) continue;  // forks never wait unadmitted
    const double limit = cfg_.max_queue_wait[static_cast<size_t>(std::clamp(r->priority, 0, 2))];
    if (r->status != RequestStatus::Waiting || limit <= 0 || now - r->class_entry_time < limit) continue;
    if (cfg_.reject_on_queue_timeout) {
      ended.push_back({r->group_id, RequestStatus::FinishedQueueTimeout,
                       "the request waited " + format_seconds(now - r->class_entry_time) +
                           " in the queue of priority class " + std::to_string(r->priority) + " (limit " +
                           format_seconds(limit) + ")"});
    } else if (r->priority > 0) {
      promote.push_back(r.get());
    }
  }
  std::sort(promote.begin(), promote.end(), [](const Request* a, const Request* b) { return runs_before(*a, *b); });
  for (Request* r : promote) {  // oldest first, so they keep their order in the class above
    waiting_.remove(r->id);
    --r->priority;
    r->class_entry_time = now;
    waiting_.push_back(r);
    ++counters_.promotions;
  }
  std::sort(ended.begin(), ended.end(), [](const EndedRequest& a, const EndedRequest& b) { return a.group_id < b.group_id; });
  for (EndedRequest& e : ended) {
    e.sequences = finish_group(e.group_id, e.status);
    ++(e.status == RequestStatus::FinishedTimeout ? counters_.timeouts : counters_.queue_timeouts);
  }
  return ended;
}

void Scheduler::finish(Request& r, RequestStatus status) {
  if (r.status == RequestStatus::Running) {
    running_.erase(std::find(running_.begin(), running_.end(), &r));
  } else {
    waiting_.remove(r.id);
  }
  kv_.free(r.id);
  r.status = status;
  ++counters_.finished;
  if (r.runner_knows) finished_since_step_.push_back(r.id);
  if (r.deadline > 0) --deadline_requests_;
  requests_.erase(r.id);
}

}  // namespace db

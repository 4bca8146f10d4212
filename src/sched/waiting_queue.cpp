#include "sched/waiting_queue.h"

#include <algorithm>

#include "util/error.h"

namespace db {

void WaitingQueue::push_back(Request* r) {
  ClassQueue& c = classes_[r->priority];
  std::deque<Request*>& q = c.by_tenant[r->tenant];
  if (q.empty()) c.turn.push_back(r->tenant);
  q.push_back(r);
  ++c.size;
  ++size_;
}

void WaitingQueue::push_front(Request* r) {
  ClassQueue& c = classes_[r->priority];
  std::deque<Request*>& q = c.by_tenant[r->tenant];
  if (!q.empty()) c.turn.erase(std::find(c.turn.begin(), c.turn.end(), r->tenant));
  c.turn.push_front(r->tenant);
  q.push_front(r);
  ++c.size;
  ++size_;
}

Request* WaitingQueue::front() const {
  DB_CHECK(!empty(), "front() of an empty waiting queue");
  const ClassQueue& c = classes_.begin()->second;
  return c.by_tenant.at(c.turn.front()).front();
}

void WaitingQueue::pop_front() {
  DB_CHECK(!empty(), "pop_front() of an empty waiting queue");
  auto it = classes_.begin();
  ClassQueue& c = it->second;
  const std::string tenant = c.turn.front();
  c.turn.pop_front();
  auto q = c.by_tenant.find(tenant);
  q->second.pop_front();
  if (q->second.empty()) {
    c.by_tenant.erase(q);
  } else {
    c.turn.push_back(tenant);  // its next request waits for the other tenants' turns
  }
  if (--c.size == 0) classes_.erase(it);
  --size_;
}

bool WaitingQueue::remove(RequestId id) {
  for (auto it = classes_.begin(); it != classes_.end(); ++it) {
    ClassQueue& c = it->second;
    for (auto q = c.by_tenant.begin(); q != c.by_tenant.end(); ++q) {
      auto pos = std::find_if(q->second.begin(), q->second.end(), [id](const Request* r) { return r->id == id; });
      if (pos == q->second.end()) continue;
      q->second.erase(pos);
      if (q->second.empty()) {
        c.turn.erase(std::find(c.turn.begin(), c.turn.end(), q->first));
        c.by_tenant.erase(q);
      }
      if (--c.size == 0) classes_.erase(it);
      --size_;
      return true;
    }
  }
  return false;
}

std::vector<RequestId> WaitingQueue::ids() const {
  std::vector<RequestId> out;
  out.reserve(size_);
  visit_in_order([&](const Request& r) {
    out.push_back(r.id);
    return true;
  });
  return out;
}

size_t WaitingQueue::size_of_class(int priority) const {
  auto it = classes_.find(priority);
  return it == classes_.end() ? 0 : it->second.size;
}

}  // namespace db

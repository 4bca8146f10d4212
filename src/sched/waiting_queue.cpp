#include "sched/waiting_queue.h"

#include <algorithm>

#include "util/error.h"

namespace db {

void WaitingQueue::push_back(Request* r) {
  classes_[r->priority].push_back(r);
  ++size_;
}

void WaitingQueue::push_front(Request* r) {
  classes_[r->priority].push_front(r);
  ++size_;
}

Request* WaitingQueue::front() const {
  DB_CHECK(!empty(), "front() of an empty waiting queue");
  return classes_.begin()->second.front();
}

void WaitingQueue::pop_front() {
  DB_CHECK(!empty(), "pop_front() of an empty waiting queue");
  auto it = classes_.begin();
  it->second.pop_front();
  if (it->second.empty()) classes_.erase(it);
  --size_;
}

bool WaitingQueue::remove(RequestId id) {
  for (auto it = classes_.begin(); it != classes_.end(); ++it) {
    auto& q = it->second;
    auto pos = std::find_if(q.begin(), q.end(), [id](const Request* r) { return r->id == id; });
    if (pos == q.end()) continue;
    q.erase(pos);
    if (q.empty()) classes_.erase(it);
    --size_;
    return true;
  }
  return false;
}

std::vector<RequestId> WaitingQueue::ids() const {
  std::vector<RequestId> out;
  out.reserve(size_);
  for (const auto& [prio, q] : classes_)
    for (const Request* r : q) out.push_back(r->id);
  return out;
}

size_t WaitingQueue::size_of_class(int priority) const {
  auto it = classes_.find(priority);
  return it == classes_.end() ? 0 : it->second.size();
}

}  // namespace db

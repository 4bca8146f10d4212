// Admission order: one FIFO per priority class, the most urgent class first.
// New requests join the back of their class; a preempted request goes back to
// the front of its class, so it resumes before anything that arrived after it.
//
//   class 0: [ a ]            front() = a, then d, e, b, c
//   class 1: [ d e ]          push_front(x) with x.priority 1 -> class 1: [ x d e ]
//   class 2: [ b c ]
#pragma once
#include <cstddef>
#include <deque>
#include <map>
#include <vector>

#include "sched/request.h"

namespace db {

class WaitingQueue {
 public:
  void push_back(Request* r);   // a new arrival: the back of its class
  void push_front(Request* r);  // a preempted request: the front of its class
  // The next request to admit; the queue must not be empty.
  Request* front() const;
  void pop_front();
  // Removes the request with this id; false when it is not queued.
  bool remove(RequestId id);

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Ids in admission order.
  std::vector<RequestId> ids() const;
  // Calls visit(const Request&) in admission order until it returns false.
  template <class Visit>
  void visit_in_order(Visit&& visit) const {
    for (const auto& [prio, q] : classes_)
      for (const Request* r : q)
        if (!visit(*r)) return;
  }
  // Queued requests of one priority class.
  size_t size_of_class(int priority) const;

 private:
  std::map<int, std::deque<Request*>> classes_;  // priority -> FIFO; no empty deques kept
  size_t size_ = 0;
};

}  // namespace db

// Admission order: the most urgent class first; within a class, tenants take
// turns (round robin), and each tenant's requests are first come first served.
// New requests join the back of their tenant's queue; a preempted request goes
// back to the front of its tenant's queue and its tenant to the front of the
// turn, so it resumes before anything that arrived after it.
//
//   class 0: turn [A]      A: [a1]           admission: a1, then
//   class 1: turn [B C]    B: [b1 b2] C: [c1]           b1 c1 b2 (B, C, B),
//   class 2: turn [B]      B: [b3]                      then b3
//
// A tenant with a thousand queued requests thus delays one with a single
// request by at most one admission per tenant ahead of it in the turn.
#pragma once
#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "sched/request.h"

namespace db {

class WaitingQueue {
 public:
  void push_back(Request* r);   // a new arrival: the back of its tenant's queue
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
  // Calls visit(const Request&) in admission order (as pop_front() would take
  // them with no new arrival) until it returns false.
  template <class Visit>
  void visit_in_order(Visit&& visit) const {
    for (const auto& [prio, c] : classes_) {
      for (size_t round = 0;; ++round) {
        bool any = false;
        for (const std::string& t : c.turn) {
          const std::deque<Request*>& q = c.by_tenant.at(t);
          if (round >= q.size()) continue;
          any = true;
          if (!visit(*q[round])) return;
        }
        if (!any) break;
      }
    }
  }
  // Queued requests of one priority class.
  size_t size_of_class(int priority) const;

 private:
  struct ClassQueue {
    std::map<std::string, std::deque<Request*>> by_tenant;  // tenant -> FIFO; no empty deques kept
    std::deque<std::string> turn;                           // tenants with queued requests, next first
    size_t size = 0;
  };
  std::map<int, ClassQueue> classes_;  // priority -> queue; no empty classes kept
  size_t size_ = 0;
};

}  // namespace db

// Service order of sequences: the more urgent class first, then first come
// first served. Running sequences are kept in this order, so the one that
// runs last is also the first to be preempted.
#pragma once
#include "sched/request.h"

namespace db {

// a before b: lower priority value, then earlier arrival, then lower id (forks of one request).
inline bool runs_before(const Request& a, const Request& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.arrival_seq != b.arrival_seq) return a.arrival_seq < b.arrival_seq;
  return a.id < b.id;
}

}  // namespace db

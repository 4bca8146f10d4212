// The memory guard: an OOM precursor. Fed a reading of the process's memory a few
// times per second (memory_reading.h), it decides how many sequences the engine
// may run and whether it may admit new ones or grow the KV cache's resident
// memory, so that the process backs off before the kernel's OOM killer acts.
//
//   ratio = usage / limit (the configured limit_bytes, else the reading's)
//
//   Normal     --ratio >= high-->  Shrinking: back off, i.e. cap = pow2_floor(cap * 0.7)
//                                  (at least 1), admission paused, no new KV pages
//   Shrinking  --ratio >= high, usage risen past the last back-off's by
//                growth_margin of the limit, backoff_interval_s after it-->  back off again
//              --ratio <  low -->  Recovering: admission open, KV may grow;
//                                  cap += recover_step per reading (additive increase)
//   Recovering --cap back at max--> Normal;  --ratio >= high--> Shrinking (back off)
//
// Admission is paused for backoff_interval_s after each back-off, long enough for
// the cut to take effect, then reopens under the reduced cap while Shrinking lasts.
// Memory the KV cache has touched stays resident, so usage may never fall below
// low again: holding admission shut until then would stall the engine once its
// running sequences finish. With KV growth frozen, admitting under the cap costs
// only per-step memory, and any renewed rise backs off again.
//
// At most one back-off per backoff_interval_s. recover_step = max(1, max_running / 16).
// Without a limit (no cgroup limit and no configured one) it stays Normal; a
// disabled guard always answers the configured maximum, open.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "memory/memory_reading.h"

namespace db {

enum class MemoryGuardState { Normal, Shrinking, Recovering };
const char* memory_guard_state_name(MemoryGuardState s);  // "normal", "shrinking", "recovering"

struct MemoryGuardConfig {
  bool enabled = true;
  double high_water = 0.90;          // usage / limit at or above which the guard backs off
  double low_water = 0.80;           // usage / limit below which it recovers
  double backoff_interval_s = 0.5;   // at most one back-off per interval
  double poll_interval_s = 0.2;      // readings are taken at most this often (see MemoryGuard::due)
  double growth_margin = 0.01;       // share of the limit usage must rise by while Shrinking to back off again
  int64_t limit_bytes = 0;           // a limit to use instead of the cgroup's (0 = the cgroup's)
};

// What the engine must apply after a reading.
struct MemoryGuardDecision {
  int32_t max_running = 0;    // running sequences at most (1 <= it <= the configured maximum)
  bool admission_paused = false;  // admit no waiting sequence while any sequence runs
  bool kv_growth_frozen = false;  // the KV cache may only reuse blocks whose memory is already resident
  // New KV memory allowed until the next reading: 0 while frozen, else what is
  // left below the high mark (high_water x limit - usage); -1 without a limit.
  // A step can then never carry usage past the high mark by growing the KV cache.
  int64_t kv_growth_bytes = -1;
};

// For /metrics and logs.
struct MemoryGuardSnapshot {
  bool enabled = false;
  MemoryGuardState state = MemoryGuardState::Normal;
  int32_t max_running = 0;
  bool admission_paused = false;
  bool kv_growth_frozen = false;
  int64_t usage_bytes = 0, limit_bytes = 0, rss_bytes = 0;  // of the latest reading; limit 0: none known
  int64_t backoffs = 0;        // back-off events so far
  int64_t recoveries = 0;      // returns to Normal so far
};

// Not thread-safe: one thread (the engine's step thread) feeds and reads it.
class MemoryGuard {
 public:
  // max_running: the engine's configured maximum of running sequences (values below 1 count as 1).
  MemoryGuard(MemoryGuardConfig cfg, int32_t max_running);

  // Whether a reading is due at `time_s`: poll_interval_s has passed since the
  // last observe() (always before the first).
  bool due(double time_s) const;
  // Folds in one reading; returns the decision to apply. Every state change,
  // back-off and reopening of admission is appended to the events as a one-line message.
  MemoryGuardDecision observe(const MemoryReading& r);
  // The latest decision (before any reading: the configured maximum, open).
  const MemoryGuardDecision& decision() const { return decision_; }
  MemoryGuardSnapshot snapshot() const { return snap_; }
  // Messages since the last call, oldest first (for the engine's log).
  std::vector<std::string> take_events();

  const MemoryGuardConfig& config() const { return cfg_; }

 private:
  void back_off(const MemoryReading& r, int64_t limit);
  void enter(MemoryGuardState s, const MemoryReading& r, int64_t limit);
  void event(const std::string& what, const MemoryReading& r, int64_t limit);

  MemoryGuardConfig cfg_;
  int32_t max_running_;
  MemoryGuardDecision decision_;
  MemoryGuardSnapshot snap_;
  double last_reading_s_ = 0;
  bool any_reading_ = false;
  double last_backoff_s_ = 0;
  bool any_backoff_ = false;
  int64_t usage_at_backoff_ = 0;
  std::vector<std::string> events_;
};

}  // namespace db

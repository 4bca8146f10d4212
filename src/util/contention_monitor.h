// Decides whether handing a thread pool's work to its workers pays.
//
// On a machine where other processes compete for the cores (and the scheduler
// shares CPU time between process groups), a second busy thread of this
// process takes CPU time away from the calling thread instead of adding to it:
// the caller then runs much less than the wall time its parallel regions take.
// The monitor is fed measured regions (the caller's CPU time over a region's
// wall time, time asleep waiting for a worker excluded) and, when the caller
// ran less than kMinShare of that wall time over a window of kWindow samples,
// switches to serial (every chunk on the caller); it probes parallel mode again
// after a number of windows that doubles after each failed probe (up to
// kMaxBackoff) and starts again from one once a parallel window is not starved.
//
// Sampling is by time, not by region: a region is measured only when at least
// kSampleGapNs of wall time passed since the last measured one ended. Reading
// a thread's CPU time is a system call, and a single-sequence decode step runs
// a region every few microseconds, so sampling by region would slow the decode
// it watches (bench/kernels/README.md). With the gap the reads cost at most a
// few per thousand of the caller's time, and a decision takes at least
// kWindow * kSampleGapNs of wall time.
#pragma once
#include <cstdint>

namespace db {

class ContentionMonitor {
 public:
  static constexpr int64_t kSampleGapNs = 1'000'000;
  static constexpr int kWindow = 32;  // samples per decision
  static constexpr int kMaxBackoff = 64;
  static constexpr double kMinShare = 0.6;

  // Whether regions run on the workers too.
  bool parallel() const { return parallel_; }

  // Whether a region starting at now_ns (any monotonic clock) should be measured.
  bool should_sample(int64_t now_ns) const { return now_ns >= next_sample_ns_; }

  // Adds one measured region that ended at end_ns: its wall time, the caller's
  // CPU time in it (negative: unknown, ignored) and the wall time the caller
  // slept waiting for workers.
  void add(int64_t wall, int64_t cpu, int64_t slept, int64_t end_ns);

 private:
  bool parallel_ = true;
  int64_t next_sample_ns_ = 0;
  int samples_ = 0;
  int64_t wall_ = 0, cpu_ = 0;
  int backoff_ = 1;       // windows to stay serial after the next failed probe
  int wait_windows_ = 0;  // windows left before the next probe
};

}  // namespace db

#include "util/contention_monitor.h"

#include <algorithm>

namespace db {

void ContentionMonitor::add(int64_t wall, int64_t cpu, int64_t slept, int64_t end_ns) {
  next_sample_ns_ = end_ns + kSampleGapNs;
  if (cpu < 0) return;
  wall_ += std::max<int64_t>(wall - slept, 1);
  cpu_ += cpu;
  if (++samples_ < kWindow) return;
  const bool starved = static_cast<double>(cpu_) < kMinShare * static_cast<double>(wall_);
  if (parallel_ && starved) {
    parallel_ = false;
    wait_windows_ = backoff_;
    backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  } else if (parallel_) {
    backoff_ = 1;
  } else if (--wait_windows_ <= 0) {
    parallel_ = true;  // probe
  }
  samples_ = 0;
  wall_ = cpu_ = 0;
}

}  // namespace db

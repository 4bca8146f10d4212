// Which requests a run's statistics count: those started after the warm-up and
// before the cool-down, so start-up transients and the drain at the end are left out.
#pragma once
#include <vector>

namespace db::loadtest {

struct MeasurementWindow {
  double run_start = 0;  // seconds, on the clock the start times use
  double run_end = 0;
  double warmup_s = 0;   // leave out requests started in [run_start, run_start + warmup_s)
  double cooldown_s = 0; // leave out requests started in (run_end - cooldown_s, run_end]

  double begin() const { return run_start + warmup_s; }
  double end() const { return run_end - cooldown_s; }
  double duration() const { return end() > begin() ? end() - begin() : 0; }  // the rates' denominator
  // Started in [begin(), end()]. A window whose warm-up and cool-down overlap counts nothing.
  bool counts(double start_time) const { return start_time >= begin() && start_time <= end(); }
};

// counts() of each start time, in order.
std::vector<bool> counted_requests(const std::vector<double>& start_times, const MeasurementWindow& window);

}  // namespace db::loadtest

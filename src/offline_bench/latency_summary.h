// Summaries of latency samples: mean and linearly interpolated percentiles.
#pragma once
#include <cstdint>
#include <vector>

namespace db::bench {

struct LatencySummary {
  int64_t count = 0;  // samples summarized (0: every other field is 0)
  double mean = 0;
  double p50 = 0, p90 = 0, p99 = 0;
  double min = 0, max = 0;
};

// The q-th percentile (q in [0, 100]) of `sorted` (ascending, non-empty), interpolated
// linearly between closest ranks: rank = q/100 * (n-1) (numpy's default "linear" method).
double percentile(const std::vector<double>& sorted, double q);

// Summary of `samples` in any order.
LatencySummary summarize(std::vector<double> samples);

}  // namespace db::bench

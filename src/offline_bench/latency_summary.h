// Summaries of latency samples: mean and linearly interpolated percentiles.
#pragma once
#include <cstdint>
#include <vector>

#include "util/percentile.h"

namespace db::bench {

struct LatencySummary {
  int64_t count = 0;  // samples summarized (0: every other field is 0)
  double mean = 0;
  double p50 = 0, p90 = 0, p99 = 0;
  double min = 0, max = 0;
};

// Percentiles are util/percentile.h's (numpy's default "linear" method).
using db::percentile;

// Summary of `samples` in any order.
LatencySummary summarize(std::vector<double> samples);

}  // namespace db::bench

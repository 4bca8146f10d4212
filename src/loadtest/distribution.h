// Summaries of latency samples: moments and percentiles.
#pragma once
#include <cstdint>
#include <vector>

#include "util/percentile.h"

namespace db::loadtest {

// Percentiles are util/percentile.h's (numpy's default "linear" method).
using db::percentile;

struct Distribution {
  int64_t count = 0;  // samples summarized; with 0 every other field is 0
  double mean = 0;
  double stddev = 0;  // population standard deviation (divides by n, numpy's default ddof=0)
  double min = 0, max = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;

  // The field for q in {50, 90, 95, 99, 99.9}; throws db::Error for any other q.
  double at_percentile(double q) const;
};

// The summary of `samples`, in any order.
Distribution summarize_samples(std::vector<double> samples);

}  // namespace db::loadtest

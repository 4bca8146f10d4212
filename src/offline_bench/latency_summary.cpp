#include "offline_bench/latency_summary.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace db::bench {

LatencySummary summarize(std::vector<double> samples) {
  LatencySummary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<int64_t>(samples.size());
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  s.p50 = percentile(samples, 50);
  s.p90 = percentile(samples, 90);
  s.p99 = percentile(samples, 99);
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

}  // namespace db::bench

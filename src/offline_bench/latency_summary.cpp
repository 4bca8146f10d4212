#include "offline_bench/latency_summary.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace db::bench {

double percentile(const std::vector<double>& sorted, double q) {
  DB_CHECK(!sorted.empty(), "percentile of no samples");
  DB_CHECK(q >= 0 && q <= 100, "percentile outside [0, 100]");
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

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

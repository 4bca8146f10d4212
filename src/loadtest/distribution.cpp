#include "loadtest/distribution.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace db::loadtest {

double Distribution::at_percentile(double q) const {
  if (q == 50) return p50;
  if (q == 90) return p90;
  if (q == 95) return p95;
  if (q == 99) return p99;
  if (q == 99.9) return p999;
  throw Error("no summary field for percentile " + std::to_string(q) + " (have 50, 90, 95, 99, 99.9)");
}

Distribution summarize_samples(std::vector<double> samples) {
  Distribution d;
  if (samples.empty()) return d;
  std::sort(samples.begin(), samples.end());
  const double n = static_cast<double>(samples.size());
  double sum = 0;
  for (double v : samples) sum += v;
  d.count = static_cast<int64_t>(samples.size());
  d.mean = sum / n;
  double squares = 0;
  for (double v : samples) squares += (v - d.mean) * (v - d.mean);
  d.stddev = std::sqrt(squares / n);
  d.min = samples.front();
  d.max = samples.back();
  d.p50 = percentile(samples, 50);
  d.p90 = percentile(samples, 90);
  d.p95 = percentile(samples, 95);
  d.p99 = percentile(samples, 99);
  d.p999 = percentile(samples, 99.9);
  return d;
}

}  // namespace db::loadtest

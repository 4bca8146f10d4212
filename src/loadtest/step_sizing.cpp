#include "loadtest/step_sizing.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace db::loadtest {

int64_t requests_for_percentile(double p) {
  DB_CHECK(p >= 0 && p < 100, "percentile outside [0, 100)");
  // The tolerance keeps 100 - 99.9 (not exactly 0.1 in binary) from adding a request.
  return static_cast<int64_t>(std::ceil(10.0 * 100.0 / (100.0 - p) - 1e-6));
}

double step_duration_s(double rate, const std::vector<Slo>& slos, double min_duration_s, int64_t requests) {
  DB_CHECK(rate > 0, "step rate must be > 0");
  double p = 50;
  for (const Slo& s : slos) p = std::max(p, s.percentile);
  const int64_t n = requests > 0 ? requests : requests_for_percentile(p);
  return std::max(min_duration_s, static_cast<double>(n) / rate);
}

}  // namespace db::loadtest

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

namespace {

// The highest percentile among `slos`, p50 when there are none.
double step_sizing_top_percentile(const std::vector<Slo>& slos) {
  double p = 50;
  for (const Slo& s : slos) p = std::max(p, s.percentile);
  return p;
}

}  // namespace

double step_duration_s(double rate, const std::vector<Slo>& slos, double min_duration_s, int64_t requests) {
  DB_CHECK(rate > 0, "step rate must be > 0");
  const int64_t n = requests > 0 ? requests : requests_for_percentile(step_sizing_top_percentile(slos));
  return std::max(min_duration_s, static_cast<double>(n) / rate);
}

int64_t default_max_step_requests(const std::vector<Slo>& slos, int64_t requests) {
  const int64_t rule = requests_for_percentile(step_sizing_top_percentile(slos));
  return std::max(rule, 4 * (requests > 0 ? requests : rule));
}

}  // namespace db::loadtest

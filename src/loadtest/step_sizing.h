// How long a capacity-finder step must run for its tail percentiles to mean something.
#pragma once
#include <cstdint>
#include <vector>

#include "loadtest/slo.h"

namespace db::loadtest {

// Rule: a step needs at least 10 samples beyond its p-th percentile, i.e.
// ceil(10 * 100 / (100 - p)) requests: p90 -> 100, p95 -> 200, p99 -> 1000, p99.9 -> 10000.
// p in [0, 100).
int64_t requests_for_percentile(double p);

// Seconds a step at `rate` requests/s needs to collect requests_for_percentile of the
// highest percentile among `slos` (p50 when there are none), or `requests` when it is
// positive (a faster, noisier search), and at least `min_duration_s`.
double step_duration_s(double rate, const std::vector<Slo>& slos, double min_duration_s = 0, int64_t requests = 0);

}  // namespace db::loadtest

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

// How many counted requests a capacity step whose confidence intervals leave it
// undecided may pool before its point estimates decide (CapacityFinderConfig::
// max_step_requests): four runs of `requests` (> 0) or of the rule's count when
// `requests` is 0, and at least the rule's count, so a step run with few requests can
// still reach as many samples as the default step has.
int64_t default_max_step_requests(const std::vector<Slo>& slos, int64_t requests = 0);

}  // namespace db::loadtest

// The lines a capacity search prints for a step after each of its runs: the step's
// outcome, then per SLO the point estimate, the samples above it and above the limit,
// the confidence interval with its order-statistic ranks and the SLO's verdict, and a
// warning where the samples are too few for the percentile.
//
//   step 2 (ramp, 5.760 req/s): 50 requests in 1 run, 5.71 req/s achieved: undecided, adding requests
//     ttft p99 <= 1 s: p99 = 833.1 ms over 50 samples (1 above it, 0 above the limit), 95% CI [x(48) = 412.0 ms, open]: undecided
//     warning: 50 samples are too few for ttft p99: the interval's upper end is not a sample below the maximum (555 samples make it one)
#pragma once
#include <string>
#include <vector>

#include "loadtest/capacity_finder.h"

namespace db::loadtest {

// `step` as record() returned it; `config` for the cap a point-estimate decision reached.
std::vector<std::string> describe_step(const CapacityStep& step, const CapacityFinderConfig& config);

}  // namespace db::loadtest

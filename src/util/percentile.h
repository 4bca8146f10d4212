// Percentiles of samples, one method for every report: linear interpolation between
// closest ranks (numpy's default "linear"): with the samples sorted ascending as
// x[0..n-1], rank = q/100 * (n-1), and the result is
// x[floor(rank)] + (rank - floor(rank)) * (x[floor(rank)+1] - x[floor(rank)]).
#pragma once
#include <vector>

namespace db {

// The q-th percentile (q in [0, 100]) of `sorted` (ascending, non-empty).
double percentile(const std::vector<double>& sorted, double q);

}  // namespace db

#include "util/percentile.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace db {

double percentile(const std::vector<double>& sorted, double q) {
  DB_CHECK(!sorted.empty(), "percentile of no samples");
  DB_CHECK(q >= 0 && q <= 100, "percentile outside [0, 100]");
  const double rank = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace db

// Distribution-free confidence intervals for a percentile from order statistics.
//
// With n independent samples sorted as x(1) <= ... <= x(n) and B ~ Binomial(n, p) the
// number of samples at or below the true p-quantile Q (p = percentile / 100):
//   P(x(l) > Q) = P(B <= l - 1)      P(x(u) < Q) = P(B >= u).
// The interval [x(l), x(u)] takes the largest l with P(B <= l - 1) <= tail and the
// smallest u with P(B >= u) <= tail, tail = (1 - confidence) / 2, so each end misses Q
// with probability at most `tail` and the interval holds Q with at least `confidence`
// (exact for continuous distributions, whatever their shape). Few samples leave an end
// open: no l when P(B = 0) > tail (nothing below proves Q is that high), no u when
// P(B = n) > tail (even the largest sample may lie below Q). E.g. p99 at 95%: 50 samples
// give x(48) and no upper end; 500 give x(490)..x(500), the maximum; 1000 give x(983)..x(997).
#pragma once
#include <cstdint>

namespace db::loadtest {

// P(B <= k) for B ~ Binomial(n, p); 0 for k < 0, 1 for k >= n. p in [0, 1].
double binomial_cdf(int64_t k, int64_t n, double p);

struct OrderStatisticInterval {
  int64_t n = 0;
  int64_t lower_rank = 0;  // 1-based rank l of the lower end; 0: no lower end
  int64_t upper_rank = 0;  // 1-based rank u of the upper end; n + 1: no upper end

  bool has_lower() const { return lower_rank >= 1; }
  bool has_upper() const { return upper_rank <= n; }
  // The upper end is a sample below the largest one, so one outlying maximum cannot
  // decide where the interval ends.
  bool upper_below_maximum() const { return upper_rank < n; }
};

// The interval of the `percentile`-th percentile (in (0, 100)) from n >= 0 samples at
// `confidence` (in (0, 1)). Throws db::Error on arguments outside those ranges.
OrderStatisticInterval percentile_interval(int64_t n, double percentile, double confidence);

// The fewest samples whose interval has an upper end below the maximum
// (upper_below_maximum()): 555 for p99, 110 for p95, 54 for p90 at 95%.
int64_t samples_for_upper_below_maximum(double percentile, double confidence);

}  // namespace db::loadtest

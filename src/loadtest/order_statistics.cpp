#include "loadtest/order_statistics.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace db::loadtest {

namespace {

// log P(B = k) for B ~ Binomial(n, p), 0 < p < 1; lgamma keeps large n from overflowing.
double order_stats_log_pmf(int64_t k, int64_t n, double p) {
  const double nd = static_cast<double>(n), kd = static_cast<double>(k);
  return std::lgamma(nd + 1) - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) + kd * std::log(p) +
         (nd - kd) * std::log1p(-p);
}

void order_stats_check(double percentile, double confidence) {
  if (!(percentile > 0 && percentile < 100)) throw Error("percentile interval: the percentile must be in (0, 100)");
  if (!(confidence > 0 && confidence < 1)) throw Error("percentile interval: the confidence must be in (0, 1)");
}

}  // namespace

double binomial_cdf(int64_t k, int64_t n, double p) {
  DB_CHECK(n >= 0 && p >= 0 && p <= 1, "binomial_cdf: needs n >= 0 and p in [0, 1]");
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (p == 0) return 1;
  if (p == 1) return 0;
  double sum = 0;
  for (int64_t i = 0; i <= k; ++i) sum += std::exp(order_stats_log_pmf(i, n, p));
  return std::min(sum, 1.0);
}

OrderStatisticInterval percentile_interval(int64_t n, double percentile, double confidence) {
  order_stats_check(percentile, confidence);
  if (n < 0) throw Error("percentile interval: negative sample count");
  const double p = percentile / 100, tail = (1 - confidence) / 2;
  OrderStatisticInterval r{n, 0, n + 1};
  // One pass over P(B <= k), k = 0..n-1: it rises, so l is the last rank with
  // P(B <= l - 1) <= tail and u the first with P(B <= u - 1) >= 1 - tail.
  double cdf = 0;
  for (int64_t k = 0; k < n; ++k) {
    cdf += std::exp(order_stats_log_pmf(k, n, p));
    if (cdf <= tail) r.lower_rank = k + 1;
    if (cdf >= 1 - tail) {
      r.upper_rank = k + 1;
      break;
    }
  }
  return r;
}

int64_t samples_for_upper_below_maximum(double percentile, double confidence) {
  order_stats_check(percentile, confidence);
  const double p = percentile / 100, tail = (1 - confidence) / 2;
  // upper_rank <= n - 1 iff P(B >= n - 1) = p^n + n p^(n-1) (1 - p) <= tail, which
  // falls as n grows (each step multiplies it by p + p (1 - p) / (p + n (1 - p)) < 1).
  for (int64_t n = 2;; ++n) {
    const double nd = static_cast<double>(n);
    const double top_two = std::exp(nd * std::log(p)) + nd * std::exp((nd - 1) * std::log(p)) * (1 - p);
    if (top_two <= tail) return n;
  }
}

}  // namespace db::loadtest

// The order-statistic interval of a percentile: its ranks against a binomial CDF the
// test computes on its own (a pmf recurrence in long double), known values, its
// coverage on drawn samples, and the sample counts its warning names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "loadtest/order_statistics.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

// P(B <= k) for k = 0..n, B ~ Binomial(n, p), from P(B = 0) = (1 - p)^n and
// P(B = k + 1) = P(B = k) * (n - k) / (k + 1) * p / (1 - p).
std::vector<long double> reference_cdf(int64_t n, long double p) {
  std::vector<long double> cdf(static_cast<size_t>(n + 1));
  long double pmf = std::pow(1 - p, static_cast<long double>(n)), sum = 0;
  for (int64_t k = 0; k <= n; ++k) {
    sum += pmf;
    cdf[static_cast<size_t>(k)] = sum;
    pmf *= static_cast<long double>(n - k) / static_cast<long double>(k + 1) * p / (1 - p);
  }
  return cdf;
}

// The interval's definition applied to reference_cdf: the largest l with
// P(B <= l - 1) <= tail (0: none), the smallest u with P(B <= u - 1) >= 1 - tail (n + 1: none).
OrderStatisticInterval reference_interval(int64_t n, double percentile, double confidence) {
  const std::vector<long double> cdf = reference_cdf(n, percentile / 100.0L);
  const long double tail = (1 - static_cast<long double>(confidence)) / 2;
  OrderStatisticInterval r{n, 0, n + 1};
  for (int64_t l = 1; l <= n; ++l)
    if (cdf[static_cast<size_t>(l - 1)] <= tail) r.lower_rank = l;
  for (int64_t u = n; u >= 1; --u)
    if (cdf[static_cast<size_t>(u - 1)] >= 1 - tail) r.upper_rank = u;
  return r;
}

TEST(BinomialCdf, MatchesTheRecurrence) {
  for (const auto& [n, p] : {std::pair<int64_t, double>{10, 0.5}, {50, 0.99}, {500, 0.99}, {1000, 0.9}}) {
    const std::vector<long double> cdf = reference_cdf(n, p);
    for (int64_t k = 0; k <= n; k += std::max<int64_t>(1, n / 50))
      EXPECT_NEAR(binomial_cdf(k, n, p), static_cast<double>(cdf[static_cast<size_t>(k)]), 1e-9)
          << "n " << n << " p " << p << " k " << k;
  }
  EXPECT_NEAR(binomial_cdf(5, 10, 0.5), 638.0 / 1024, 1e-12);  // (1 + 10 + 45 + 120 + 210 + 252) / 2^10
  EXPECT_EQ(binomial_cdf(-1, 10, 0.5), 0);
  EXPECT_EQ(binomial_cdf(10, 10, 0.5), 1);
}

TEST(PercentileInterval, FiftySamplesLeaveTheP99OpenAbove) {
  const OrderStatisticInterval r = percentile_interval(50, 99, 0.95);
  EXPECT_EQ(r.lower_rank, 48);
  EXPECT_FALSE(r.has_upper());  // P(all 50 below the p99) = 0.99^50 = 0.61 > 0.025
  EXPECT_EQ(r.upper_rank, 51);
  EXPECT_FALSE(r.upper_below_maximum());
  EXPECT_EQ(r.lower_rank, reference_interval(50, 99, 0.95).lower_rank);
}

TEST(PercentileInterval, RanksMatchTheBinomialDefinition) {
  const OrderStatisticInterval r500 = percentile_interval(500, 99, 0.95), ref500 = reference_interval(500, 99, 0.95);
  EXPECT_EQ(r500.lower_rank, ref500.lower_rank);
  EXPECT_EQ(r500.upper_rank, ref500.upper_rank);
  EXPECT_EQ(r500.lower_rank, 490);  // also from exact rational arithmetic
  EXPECT_EQ(r500.upper_rank, 500);  // the maximum: 500 samples are too few for a p99 bound below it
  EXPECT_TRUE(r500.has_upper());
  EXPECT_FALSE(r500.upper_below_maximum());

  const OrderStatisticInterval r1000 = percentile_interval(1000, 99, 0.95);
  EXPECT_EQ(r1000.lower_rank, 983);
  EXPECT_EQ(r1000.upper_rank, 997);
  const OrderStatisticInterval p90 = percentile_interval(100, 90, 0.95);
  EXPECT_EQ(p90.lower_rank, 84);
  EXPECT_EQ(p90.upper_rank, 96);

  for (int64_t n : {1, 2, 10, 36, 37, 54, 99, 367, 368, 369, 554, 555, 2000})
    for (double q : {90.0, 95.0, 99.0})
      for (double c : {0.9, 0.95, 0.99}) {
        const OrderStatisticInterval got = percentile_interval(n, q, c), want = reference_interval(n, q, c);
        EXPECT_EQ(got.lower_rank, want.lower_rank) << "n " << n << " p" << q << " at " << c;
        EXPECT_EQ(got.upper_rank, want.upper_rank) << "n " << n << " p" << q << " at " << c;
      }
}

TEST(PercentileInterval, CoversTheTruePercentileAtLeastAsOftenAsAsked) {
  // Exponential latencies: the true p95 is ln(20). 4000 sets of 200 samples.
  std::mt19937_64 rng(12345);
  std::exponential_distribution<double> latency(1.0);
  const double truth = std::log(20.0);
  const OrderStatisticInterval r = percentile_interval(200, 95, 0.9);
  ASSERT_TRUE(r.has_lower() && r.has_upper());
  int covered = 0, below = 0;
  const int sets = 4000;
  std::vector<double> x(200);
  for (int s = 0; s < sets; ++s) {
    for (double& v : x) v = latency(rng);
    std::sort(x.begin(), x.end());
    const double lo = x[static_cast<size_t>(r.lower_rank - 1)], hi = x[static_cast<size_t>(r.upper_rank - 1)];
    covered += lo <= truth && truth <= hi;
    below += hi < truth;
  }
  // Exact coverage is >= 0.9 (each end misses with <= 0.05); 4000 draws put the
  // observed fraction within 0.015 of it with near certainty.
  EXPECT_GE(covered, static_cast<int>(0.885 * sets));
  EXPECT_LE(below, static_cast<int>(0.065 * sets));
}

TEST(PercentileInterval, SamplesForAnUpperEndBelowTheMaximum) {
  EXPECT_EQ(samples_for_upper_below_maximum(99, 0.95), 555);
  EXPECT_EQ(samples_for_upper_below_maximum(95, 0.95), 110);
  EXPECT_EQ(samples_for_upper_below_maximum(90, 0.95), 54);
  for (double q : {90.0, 95.0, 99.0}) {
    const int64_t n = samples_for_upper_below_maximum(q, 0.95);
    EXPECT_FALSE(percentile_interval(n - 1, q, 0.95).upper_below_maximum()) << q;
    EXPECT_TRUE(percentile_interval(n, q, 0.95).upper_below_maximum()) << q;
  }
}

TEST(PercentileInterval, NoSamplesAndBadArguments) {
  const OrderStatisticInterval r = percentile_interval(0, 99, 0.95);
  EXPECT_FALSE(r.has_lower());
  EXPECT_FALSE(r.has_upper());
  EXPECT_THROW(percentile_interval(10, 100, 0.95), Error);
  EXPECT_THROW(percentile_interval(10, 99, 1), Error);
  EXPECT_THROW(percentile_interval(-1, 99, 0.95), Error);
  EXPECT_THROW(samples_for_upper_below_maximum(99, 0), Error);
}

}  // namespace
}  // namespace db::loadtest

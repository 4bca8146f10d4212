#include "offline_bench/latency_summary.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace db::bench {
namespace {

TEST(Percentile, InterpolatesBetweenClosestRanks) {
  const std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(v, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 3.97);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7.0);
  EXPECT_THROW(percentile({}, 50), Error);
  EXPECT_THROW(percentile(v, 101), Error);
}

TEST(Summarize, SortsAndSummarizes) {
  const LatencySummary s = summarize({10, 0, 30, 20, 40});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.mean, 20.0);
  EXPECT_DOUBLE_EQ(s.p50, 20.0);
  EXPECT_DOUBLE_EQ(s.p90, 36.0);
  EXPECT_DOUBLE_EQ(s.p99, 39.6);
  EXPECT_DOUBLE_EQ(s.min, 0.0);
  EXPECT_DOUBLE_EQ(s.max, 40.0);
}

TEST(Summarize, EmptyIsAllZero) {
  const LatencySummary s = summarize({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.p99, 0.0);
}

}  // namespace
}  // namespace db::bench

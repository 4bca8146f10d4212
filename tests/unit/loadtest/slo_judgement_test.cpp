// The decision rule on a percentile's interval and judge_slo on samples: one slow
// request among 50 leaves a p99 SLO undecided where the point estimate missed it.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "loadtest/slo_judgement.h"

namespace db::loadtest {
namespace {

TEST(IntervalVerdict, WholeIntervalDecides) {
  EXPECT_EQ(interval_verdict(0.2, 0.9, 1.0), Verdict::Met);
  EXPECT_EQ(interval_verdict(0.2, 1.0, 1.0), Verdict::Met);  // the limit is within ("<=")
  EXPECT_EQ(interval_verdict(1.1, 3.0, 1.0), Verdict::Missed);
  EXPECT_EQ(interval_verdict(1.0, 3.0, 1.0), Verdict::Undecided);  // lower end at the limit: could be met
  EXPECT_EQ(interval_verdict(0.5, 1.5, 1.0), Verdict::Undecided);
  EXPECT_EQ(interval_verdict(0.5, std::nullopt, 1.0), Verdict::Undecided);  // open above: never met
  EXPECT_EQ(interval_verdict(1.5, std::nullopt, 1.0), Verdict::Missed);
  EXPECT_EQ(interval_verdict(std::nullopt, 0.5, 1.0), Verdict::Met);
  EXPECT_EQ(interval_verdict(std::nullopt, 1.5, 1.0), Verdict::Undecided);
  EXPECT_EQ(interval_verdict(std::nullopt, std::nullopt, 1.0), Verdict::Undecided);
}

// n samples of `fast` seconds with `slow` seconds in place of the last `outliers`.
std::vector<double> judgement_samples(int n, int outliers, double fast = 0.2, double slow = 5.0) {
  std::vector<double> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = i < n - outliers ? fast + 1e-4 * i : slow;
  return x;
}

TEST(JudgeSlo, OneOutlierAmongFiftyLeavesTheP99Undecided) {
  const Slo slo{Metric::TTFT, 99, 1.0};
  const SloJudgement j = judge_slo(judgement_samples(50, 1), slo, 0.95);
  EXPECT_GT(j.estimate, slo.limit_s);  // the point estimate alone would call it missed
  EXPECT_EQ(j.verdict, Verdict::Undecided);
  EXPECT_EQ(j.samples, 50);
  EXPECT_EQ(j.above_estimate, 1);
  EXPECT_EQ(j.above_limit, 1);
  EXPECT_EQ(j.ranks.lower_rank, 48);
  ASSERT_TRUE(j.lower.has_value());
  EXPECT_DOUBLE_EQ(*j.lower, 0.2 + 1e-4 * 47);
  EXPECT_FALSE(j.upper.has_value());
  EXPECT_TRUE(j.too_few_samples);
  EXPECT_EQ(j.samples_wanted, 555);
}

TEST(JudgeSlo, EnoughSamplesDecideEitherWay) {
  const Slo slo{Metric::E2E, 99, 1.0};
  // 1000 samples: [x(983), x(997)]. Three outliers leave x(997) fast: met.
  const SloJudgement met = judge_slo(judgement_samples(1000, 3), slo, 0.95);
  EXPECT_EQ(met.verdict, Verdict::Met);
  EXPECT_FALSE(met.too_few_samples);
  EXPECT_EQ(met.above_limit, 3);
  // Four put x(997) above the limit, yet x(983) is fast: undecided.
  EXPECT_EQ(judge_slo(judgement_samples(1000, 4), slo, 0.95).verdict, Verdict::Undecided);
  // 18 put x(983) above it: missed.
  EXPECT_EQ(judge_slo(judgement_samples(1000, 17), slo, 0.95).verdict, Verdict::Undecided);
  const SloJudgement missed = judge_slo(judgement_samples(1000, 18), slo, 0.95);
  EXPECT_EQ(missed.verdict, Verdict::Missed);
  EXPECT_EQ(missed.above_limit, 18);
  // Samples in any order.
  std::vector<double> shuffled = judgement_samples(1000, 3);
  std::reverse(shuffled.begin(), shuffled.end());
  EXPECT_EQ(judge_slo(shuffled, slo, 0.95).verdict, Verdict::Met);
}

TEST(JudgeSlo, NoSamplesMissTheSlo) {
  const SloJudgement j = judge_slo({}, {Metric::TPOT, 90, 0.1}, 0.95);
  EXPECT_EQ(j.verdict, Verdict::Missed);
  EXPECT_EQ(j.samples, 0);
  EXPECT_TRUE(j.too_few_samples);
}

}  // namespace
}  // namespace db::loadtest

// Percentiles against hand-computed values, and the run summary (TPOT, ITL, jitter,
// rates, goodput, errors) of a hand-made set of requests; step sizing.
#include <gtest/gtest.h>

#include "loadtest/distribution.h"
#include "loadtest/latency_stats.h"
#include "loadtest/step_sizing.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

TEST(Percentile, LinearInterpolationBetweenClosestRanks) {
  // rank = q/100 * (n - 1); n = 4: p50 -> 1.5, p90 -> 2.7, p99 -> 2.97, p99.9 -> 2.997.
  const std::vector<double> four{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile(four, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile(four, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile(four, 99), 3.97);
  EXPECT_DOUBLE_EQ(percentile(four, 99.9), 3.997);
  EXPECT_DOUBLE_EQ(percentile(four, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(four, 100), 4);

  // 1..10: p90 -> rank 8.1, p95 -> 8.55, p99 -> 8.91, p99.9 -> 8.991.
  const Distribution d = summarize_samples({10, 3, 7, 1, 9, 2, 8, 4, 6, 5});
  EXPECT_EQ(d.count, 10);
  EXPECT_DOUBLE_EQ(d.mean, 5.5);
  EXPECT_DOUBLE_EQ(d.p50, 5.5);
  EXPECT_DOUBLE_EQ(d.p90, 9.1);
  EXPECT_DOUBLE_EQ(d.p95, 9.55);
  EXPECT_DOUBLE_EQ(d.p99, 9.91);
  EXPECT_DOUBLE_EQ(d.p999, 9.991);
  EXPECT_EQ(d.min, 1);
  EXPECT_EQ(d.max, 10);
}

TEST(Percentile, TinySamples) {
  const Distribution one = summarize_samples({7});
  EXPECT_EQ(one.p50, 7);
  EXPECT_EQ(one.p999, 7);
  EXPECT_EQ(one.stddev, 0);
  const Distribution two = summarize_samples({20, 10});
  EXPECT_DOUBLE_EQ(two.p50, 15);
  EXPECT_DOUBLE_EQ(two.p90, 19);
  EXPECT_DOUBLE_EQ(two.p99, 19.9);
  EXPECT_DOUBLE_EQ(two.p999, 19.99);
  const Distribution none = summarize_samples({});
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.p99, 0);
}

TEST(Distribution, PopulationStandardDeviationAndPercentileLookup) {
  const Distribution d = summarize_samples({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(d.mean, 5);
  EXPECT_DOUBLE_EQ(d.stddev, 2);
  EXPECT_EQ(d.at_percentile(99), d.p99);
  EXPECT_EQ(d.at_percentile(99.9), d.p999);
  EXPECT_THROW(d.at_percentile(75), Error);
}

RequestResult ok(double ttft, double e2e, int32_t in, int32_t out, std::vector<double> itl) {
  RequestResult r;
  r.ok = true;
  r.ttft = ttft;
  r.e2e = e2e;
  r.input_tokens = in;
  r.output_tokens = out;
  r.itl = std::move(itl);
  return r;
}

RequestResult failed(const std::string& type) {
  RequestResult r;
  r.error_type = type;
  return r;
}

// A: TPOT (1.1 - 0.1) / 10 = 0.1; B: TPOT (2.5 - 0.5) / 4 = 0.5; C: one token, no TPOT.
std::vector<RequestResult> hand_made() {
  return {ok(0.1, 1.1, 100, 11, std::vector<double>(10, 0.1)), ok(0.5, 2.5, 200, 5, {0.2, 0.3, 0.5, 1.0}),
          ok(0.2, 0.2, 50, 1, {}), failed("timeout"), failed("http_503"), failed("timeout")};
}

TEST(RequestResult, Tpot) {
  const auto rs = hand_made();
  EXPECT_DOUBLE_EQ(*rs[0].tpot(), 0.1);
  EXPECT_DOUBLE_EQ(*rs[1].tpot(), 0.5);
  EXPECT_FALSE(rs[2].tpot().has_value());
}

TEST(RunSummary, RatesTpotItlJitterGoodputAndErrors) {
  const std::vector<Slo> slos{{Metric::TTFT, 99, 0.3}, {Metric::TPOT, 99, 0.2}};
  const RunSummary s = summarize_run(hand_made(), /*duration_s=*/2.0, slos);
  EXPECT_EQ(s.requests, 6);
  EXPECT_EQ(s.succeeded, 3);
  EXPECT_EQ(s.failed, 3);
  EXPECT_DOUBLE_EQ(s.request_rate, 1.5);
  EXPECT_DOUBLE_EQ(s.input_tokens_per_s, 175);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_s, 8.5);
  EXPECT_EQ(s.good, 2);  // A and C; B's TTFT and TPOT are over
  EXPECT_DOUBLE_EQ(s.goodput, 1.0);
  EXPECT_EQ(s.errors, (std::map<std::string, int64_t>{{"http_503", 1}, {"timeout", 2}}));

  EXPECT_EQ(s.tpot.count, 2);
  EXPECT_DOUBLE_EQ(s.tpot.mean, 0.3);
  EXPECT_EQ(s.ttft.count, 3);
  EXPECT_DOUBLE_EQ(s.ttft.p50, 0.2);
  // 14 pooled ITLs: ten 0.1 then 0.2, 0.3, 0.5, 1.0. p50: rank 6.5 -> 0.1;
  // p99: rank 12.87 -> 0.5 + 0.87 * 0.5 = 0.935.
  EXPECT_EQ(s.itl.count, 14);
  EXPECT_DOUBLE_EQ(s.itl.mean, 3.0 / 14);
  EXPECT_DOUBLE_EQ(s.itl.p50, 0.1);
  EXPECT_NEAR(s.itl.p99, 0.935, 1e-12);
  EXPECT_NEAR(s.itl_jitter.p99_minus_p50, 0.835, 1e-12);
  EXPECT_DOUBLE_EQ(s.itl_jitter.stddev, s.itl.stddev);
  EXPECT_GT(s.itl_jitter.stddev, 0);

  EXPECT_DOUBLE_EQ(s.observed(slos[0]), s.ttft.p99);
  EXPECT_FALSE(s.met(slos[0]));  // p99 of {0.1, 0.2, 0.5} = 0.494
}

TEST(RunSummary, ItlSloUsesEachRequestsOwnPercentile) {
  const auto rs = hand_made();
  // B's own ITL p90: rank 2.7 of {0.2, 0.3, 0.5, 1.0} -> 0.85.
  EXPECT_TRUE(meets(rs[1], {Metric::ITL, 90, 0.851}));
  EXPECT_FALSE(meets(rs[1], {Metric::ITL, 90, 0.849}));
  EXPECT_TRUE(meets(rs[2], {Metric::ITL, 99, 0.01}));  // no ITLs
  EXPECT_FALSE(meets(rs[3], {Metric::E2E, 99, 100}));   // failed requests meet nothing
  const RunSummary s = summarize_run(rs, 2.0, {{Metric::ITL, 90, 0.6}, {Metric::E2E, 95, 3}});
  EXPECT_EQ(s.good, 2);  // A and C
}

TEST(RunSummary, NoDurationMeansNoRates) {
  const RunSummary s = summarize_run(hand_made(), 0, {});
  EXPECT_EQ(s.good, 3);  // no SLOs: every success is good
  EXPECT_EQ(s.request_rate, 0);
  EXPECT_EQ(s.goodput, 0);
}

TEST(StepSizing, TenSamplesBeyondThePercentile) {
  EXPECT_EQ(requests_for_percentile(90), 100);
  EXPECT_EQ(requests_for_percentile(95), 200);
  EXPECT_EQ(requests_for_percentile(99), 1000);
  EXPECT_EQ(requests_for_percentile(99.9), 10000);
  EXPECT_EQ(requests_for_percentile(50), 20);
  const std::vector<Slo> slos{{Metric::TTFT, 90, 1}, {Metric::E2E, 99, 5}};
  EXPECT_DOUBLE_EQ(step_duration_s(20, slos), 50);           // 1000 requests at 20/s
  EXPECT_DOUBLE_EQ(step_duration_s(200, slos, 30), 30);      // 5 s of requests, at least 30 s
  EXPECT_DOUBLE_EQ(step_duration_s(2, {}), 10);              // p50: 20 requests
  EXPECT_DOUBLE_EQ(step_duration_s(20, slos, 0, 200), 10);   // 200 requests asked for instead of 1000
}

TEST(StepSizing, AStepMayPoolFourRunsAndAtLeastTheRulesCount) {
  const std::vector<Slo> p99{{Metric::TTFT, 99, 1}}, p90{{Metric::TTFT, 90, 1}};
  EXPECT_EQ(default_max_step_requests(p99), 4000);       // four default steps of 1000
  EXPECT_EQ(default_max_step_requests(p99, 50), 1000);   // 4 x 50 is fewer than the rule's 1000
  EXPECT_EQ(default_max_step_requests(p99, 500), 2000);
  EXPECT_EQ(default_max_step_requests(p90, 100), 400);
}

TEST(RunSummary, MetricSamplesOfSuccessfulRequests) {
  const auto rs = hand_made();
  const RunSummary s = summarize_run(rs, 2.0, {});
  for (Metric m : {Metric::TTFT, Metric::TPOT, Metric::ITL, Metric::E2E}) {
    const std::vector<double> x = metric_samples(rs, m);
    EXPECT_EQ(static_cast<int64_t>(x.size()), s.metric(m).count) << metric_name(m);
    EXPECT_DOUBLE_EQ(summarize_samples(x).p90, s.metric(m).p90) << metric_name(m);
  }
}

}  // namespace
}  // namespace db::loadtest

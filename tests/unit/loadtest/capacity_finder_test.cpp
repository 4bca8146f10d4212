// The capacity finder against simulated servers:
// - SimulatedServer: E2E latencies spread evenly up to a p99 of base / (1 - rate /
//   capacity) below capacity and huge above it, so the highest rate within an E2E p99
//   limit L is capacity * (1 - base / L);
// - OutlierServer: TTFTs far below the limit up to its capacity and far above it
//   beyond, except one request in 500, which is slow: one slow request among a step's
//   first 50 must not decide that step.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "loadtest/capacity_finder.h"
#include "loadtest/step_sizing.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

struct SimulatedServer {
  double capacity = 100;  // requests/s
  double base = 0.5;      // p99 E2E at no load, seconds
  double error_fraction = 0;
  int32_t per_run = 1000;

  // The p99 of the E2E latencies at `rate` (1e6 s at capacity and above).
  double p99(double rate) const { return rate < capacity ? base / (1 - rate / capacity) : 1e6; }

  // One run at `rate`: per_run requests, the first error_fraction of them failed, the
  // others' E2E latencies (i + 0.5) / n * p99 / 0.99 for i = 0..n-1.
  std::vector<RequestResult> run(double rate) const {
    std::vector<RequestResult> out(static_cast<size_t>(per_run));
    const int32_t failed = static_cast<int32_t>(error_fraction * per_run);
    for (int32_t i = 0; i < per_run; ++i) {
      RequestResult& r = out[static_cast<size_t>(i)];
      r.ok = i >= failed;
      r.error_type = r.ok ? "" : "http_503";
      r.e2e = (i + 0.5) / per_run * p99(rate) / 0.99;
      r.ttft = r.e2e / 2;
      r.output_tokens = 8;
    }
    return out;
  }
};

struct OutlierServer {
  double capacity = 20;  // requests/s
  int32_t per_run = 50;
  int64_t sent = 0;      // requests so far, over every run

  // TTFTs of 0.2..0.29 s at or below capacity, 2 s above, and 5 s for every 500th request.
  std::vector<RequestResult> run(double rate) {
    std::vector<RequestResult> out(static_cast<size_t>(per_run));
    for (int32_t i = 0; i < per_run; ++i, ++sent) {
      RequestResult& r = out[static_cast<size_t>(i)];
      r.ok = true;
      r.ttft = sent % 500 == 0 ? 5.0 : (rate <= capacity ? 0.2 + 0.01 * (i % 10) : 2.0);
      r.e2e = r.ttft + 0.5;
      r.output_tokens = 10;
    }
    return out;
  }
};

template <typename Server>
CapacityResult run(CapacityFinder& finder, Server& server) {
  while (!finder.done()) {
    const double rate = finder.proposed_rate();
    finder.record(server.run(rate), server.per_run / rate);
  }
  return finder.result();
}

TEST(CapacityFinder, ConvergesOnTheTrueBoundaryWithinItsPrecision) {
  SimulatedServer server;
  const double limit = 2.0, boundary = server.capacity * (1 - server.base / limit);  // 75 requests/s
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, limit}};
  config.start_rate = 10;
  config.max_step_requests = 4000;
  CapacityFinder finder(config);
  const CapacityResult r = run(finder, server);

  EXPECT_TRUE(r.found);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.stop_reason, "converged");
  ASSERT_TRUE(r.first_bad_rate.has_value());
  EXPECT_LE(r.sustainable_rate, boundary);
  EXPECT_GT(*r.first_bad_rate, boundary);
  EXPECT_LE((*r.first_bad_rate - r.sustainable_rate) / r.sustainable_rate, config.precision);
  EXPECT_GE(r.sustainable_rate, boundary * (1 - config.precision));

  // The log: a x1.2 ramp from 10 until the first violation, then bisection.
  ASSERT_GE(r.steps.size(), 3u);
  double expected = 10;
  size_t i = 0;
  for (; i < r.steps.size() && r.steps[i].phase == "ramp"; ++i, expected *= 1.2) {
    EXPECT_EQ(r.steps[i].index, static_cast<int32_t>(i));
    EXPECT_NEAR(r.steps[i].rate, expected, 1e-9);
  }
  EXPECT_FALSE(r.steps[i - 1].met);  // the ramp ends at its first violation
  for (size_t k = 0; k + 1 < i; ++k) EXPECT_TRUE(r.steps[k].met);
  for (; i < r.steps.size(); ++i) EXPECT_EQ(r.steps[i].phase, "bisect");
  for (const CapacityStep& s : r.steps) {
    // 1000 samples put the interval within 0.8% of the true p99, which no step's rate
    // comes that close to: the intervals decide every step, and rightly.
    EXPECT_EQ(s.decided_by, "interval") << "rate " << s.rate;
    EXPECT_EQ(s.runs, 1);
    EXPECT_EQ(s.met, s.rate <= boundary) << "rate " << s.rate;
    EXPECT_EQ(s.verdict, s.met ? Verdict::Met : Verdict::Missed);
    ASSERT_EQ(s.checks.size(), 1u);
    EXPECT_EQ(s.checks[0].met, s.met);
    EXPECT_NEAR(s.checks[0].observed, server.p99(s.rate), 1e-3 * server.p99(s.rate));
    EXPECT_EQ(s.checks[0].judgement.samples, 1000);
    EXPECT_EQ(s.checks[0].judgement.ranks.lower_rank, 983);
    EXPECT_EQ(s.checks[0].judgement.ranks.upper_rank, 997);
  }
}

TEST(CapacityFinder, TighterPrecisionGetsCloser) {
  SimulatedServer server{200, 0.1, 0};
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, 0.4}};  // boundary 150
  config.start_rate = 3;
  config.precision = 0.005;
  config.max_step_requests = 4000;
  CapacityFinder finder(config);
  const CapacityResult r = run(finder, server);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.sustainable_rate, 150);
  EXPECT_GE(r.sustainable_rate, 150 * (1 - 0.005));
}

TEST(CapacityFinder, StartRateTooHighSearchesDownward) {
  SimulatedServer server;
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, 2.0}};  // boundary 75
  config.start_rate = 400;
  CapacityFinder finder(config);
  const CapacityResult r = run(finder, server);
  EXPECT_EQ(r.steps[0].phase, "ramp");
  EXPECT_EQ(r.steps[1].phase, "ramp_down");
  EXPECT_DOUBLE_EQ(r.steps[1].rate, 200);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.sustainable_rate, 75);
  EXPECT_GE(r.sustainable_rate, 75 * 0.95);
}

TEST(CapacityFinder, StopsAtMaxRateWithoutViolation) {
  SimulatedServer server;
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, 10}};
  config.start_rate = 10;
  config.max_rate = 20;
  CapacityFinder finder(config);
  const CapacityResult r = run(finder, server);
  EXPECT_EQ(r.stop_reason, "max rate met the SLOs");
  EXPECT_DOUBLE_EQ(r.sustainable_rate, 20);
  EXPECT_FALSE(r.first_bad_rate.has_value());
  EXPECT_FALSE(r.converged);
}

TEST(CapacityFinder, ErrorsAndMissingSamplesViolate) {
  SimulatedServer failing;
  failing.error_fraction = 0.05;
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, 100}};
  config.start_rate = 1;
  config.min_rate = 0.2;
  config.max_step_requests = 4000;  // errors decide at once: no runs are added
  CapacityFinder finder(config);
  const CapacityResult r = run(finder, failing);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.stop_reason, "no rate down to the minimum met the SLOs");
  ASSERT_EQ(r.steps.size(), 3u);  // 1, 0.5, 0.25
  for (const CapacityStep& s : r.steps) {
    EXPECT_EQ(s.decided_by, "errors");
    EXPECT_EQ(s.runs, 1);
    EXPECT_EQ(s.checks[0].judgement.verdict, Verdict::Met);  // the latencies alone were fine
  }

  config.slos = {{Metric::TPOT, 99, 100}};
  std::vector<RequestResult> one_token(10);
  for (RequestResult& x : one_token) {
    x.ok = true;
    x.output_tokens = 1;  // no TPOT sample
  }
  const CapacityStep step = evaluate_step(one_token, 1.0, config, false);
  EXPECT_FALSE(step.met);
  EXPECT_EQ(step.verdict, Verdict::Missed);
  EXPECT_EQ(step.decided_by, "interval");
  EXPECT_EQ(step.checks[0].judgement.samples, 0);
}

TEST(CapacityFinder, UndecidedStepGetsMoreRunsAtItsRate) {
  SimulatedServer server{100, 0.1, 0, 50};  // p99 far below the limit at 10 req/s
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, 2.0}};
  config.start_rate = 10;
  config.max_step_requests = 1000;
  CapacityFinder finder(config);
  // A p99 interval has an upper end from 368 samples on: runs of 50 need 8.
  for (int32_t run = 1; run <= 7; ++run) {
    const CapacityStep& s = finder.record(server.run(10), 5.0);
    EXPECT_EQ(s.verdict, Verdict::Undecided) << "run " << run;
    EXPECT_TRUE(s.decided_by.empty());
    EXPECT_EQ(s.runs, run);
    EXPECT_EQ(s.requests, 50 * run);
    EXPECT_TRUE(s.checks[0].judgement.too_few_samples);
    EXPECT_TRUE(finder.extending());
    EXPECT_DOUBLE_EQ(finder.proposed_rate(), 10);
    EXPECT_TRUE(finder.result().steps.empty());
  }
  const CapacityStep& s = finder.record(server.run(10), 5.0);
  EXPECT_EQ(s.verdict, Verdict::Met);
  EXPECT_EQ(s.decided_by, "interval");
  EXPECT_EQ(s.runs, 8);
  EXPECT_EQ(s.requests, 400);
  EXPECT_NEAR(s.achieved_rate, 10, 1e-9);  // 400 requests over 8 runs of 5 s
  EXPECT_FALSE(finder.extending());
  EXPECT_DOUBLE_EQ(finder.proposed_rate(), 12);
  ASSERT_EQ(finder.result().steps.size(), 1u);
}

TEST(CapacityFinder, CapOrAnEmptyRunDecidesOnThePointEstimate) {
  SimulatedServer server{100, 0.1, 0, 50};
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, 2.0}};
  config.start_rate = 10;
  config.max_step_requests = 100;
  CapacityFinder capped(config);
  EXPECT_EQ(capped.record(server.run(10), 5.0).verdict, Verdict::Undecided);
  const CapacityStep& s = capped.record(server.run(10), 5.0);
  EXPECT_EQ(s.verdict, Verdict::Met);
  EXPECT_EQ(s.decided_by, "point estimate");
  EXPECT_EQ(s.checks[0].judgement.verdict, Verdict::Undecided);
  EXPECT_TRUE(s.checks[0].met);

  config.max_step_requests = 0;  // no runs added: the finder without intervals
  CapacityFinder at_once(config);
  EXPECT_EQ(at_once.record(server.run(10), 5.0).decided_by, "point estimate");

  config.max_step_requests = 1000;
  CapacityFinder starved(config);
  EXPECT_EQ(starved.record(server.run(10), 5.0).verdict, Verdict::Undecided);
  const CapacityStep& t = starved.record({}, 5.0);  // the window counted nothing
  EXPECT_EQ(t.decided_by, "point estimate");
  EXPECT_EQ(t.runs, 2);
  EXPECT_EQ(t.requests, 50);
}

TEST(CapacityFinder, OneSlowRequestAmongFiftyNoLongerDecidesAStep) {
  const std::vector<Slo> slos{{Metric::TTFT, 99, 1.0}};
  CapacityFinderConfig config;
  config.slos = slos;
  config.start_rate = 4;

  // Deciding at once on the point estimate (the finder before intervals): the p99 of
  // 50 samples is their maximum, so the first step's slow request makes 4 req/s fail
  // and the search settles far below the true 20 req/s.
  config.max_step_requests = 0;
  OutlierServer old_server;
  CapacityFinder old_finder(config);
  const CapacityResult old_result = run(old_finder, old_server);
  EXPECT_FALSE(old_result.steps[0].met);
  EXPECT_LT(old_result.sustainable_rate, 4);

  // With intervals, steps of 50 and of 100 requests both find 20 req/s in their bracket.
  for (int32_t per_run : {50, 100}) {
    config.max_step_requests = default_max_step_requests(slos, per_run);
    EXPECT_EQ(config.max_step_requests, 1000);
    OutlierServer server;
    server.per_run = per_run;
    CapacityFinder finder(config);
    const CapacityResult r = run(finder, server);
    ASSERT_TRUE(r.found && r.converged && r.first_bad_rate) << per_run << ": " << r.stop_reason;
    EXPECT_LE(r.sustainable_rate, server.capacity) << per_run;
    EXPECT_GT(*r.first_bad_rate, server.capacity) << per_run;
    EXPECT_TRUE(r.steps[0].met) << per_run;
    EXPECT_GT(r.steps[0].runs, 1) << per_run;  // more requests, not one slow one, decided it
    for (const CapacityStep& s : r.steps) {
      EXPECT_EQ(s.decided_by, "interval") << per_run << " requests per run, rate " << s.rate;
      EXPECT_EQ(s.met, s.rate <= server.capacity) << per_run << " requests per run, rate " << s.rate;
    }
  }
}

TEST(CapacityFinder, RejectsBadConfigs) {
  CapacityFinderConfig config;
  EXPECT_THROW(CapacityFinder{config}, Error);  // no SLOs
  config.slos = {{Metric::TTFT, 99.9, 1}};
  EXPECT_THROW(CapacityFinder{config}, Error);  // percentile not 90/95/99
  config.slos = {{Metric::TTFT, 99, 1}};
  config.ramp_factor = 1;
  EXPECT_THROW(CapacityFinder{config}, Error);
  config.ramp_factor = 1.2;
  config.confidence = 1;
  EXPECT_THROW(CapacityFinder{config}, Error);
  config.confidence = 0.95;
  config.max_step_requests = -1;
  EXPECT_THROW(CapacityFinder{config}, Error);
}

}  // namespace
}  // namespace db::loadtest

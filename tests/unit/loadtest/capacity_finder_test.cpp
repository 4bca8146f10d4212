// The capacity finder against a simulated server whose p99 E2E latency is
// base / (1 - rate / capacity) below capacity and infinite above it, so the highest
// rate within an SLO limit L is capacity * (1 - base / L).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "loadtest/capacity_finder.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

struct SimulatedServer {
  double capacity = 100;  // requests/s
  double base = 0.5;      // p99 E2E at no load, seconds
  double error_fraction = 0;

  RunSummary step(double rate) const {
    RunSummary s;
    s.requests = 1000;
    s.failed = static_cast<int64_t>(error_fraction * 1000);
    s.succeeded = s.requests - s.failed;
    s.request_rate = rate;
    const double p99 = rate < capacity ? base / (1 - rate / capacity) : std::numeric_limits<double>::infinity();
    s.e2e.count = s.succeeded;
    s.e2e.p99 = p99;
    s.e2e.p95 = s.e2e.p90 = s.e2e.p50 = p99 / 2;
    return s;
  }
};

CapacityResult run(CapacityFinder& finder, const SimulatedServer& server) {
  while (!finder.done()) finder.record(server.step(finder.proposed_rate()));
  return finder.result();
}

TEST(CapacityFinder, ConvergesOnTheTrueBoundaryWithinItsPrecision) {
  const SimulatedServer server;
  const double limit = 2.0, boundary = server.capacity * (1 - server.base / limit);  // 75 requests/s
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, limit}};
  config.start_rate = 10;
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
    EXPECT_EQ(s.met, s.rate <= boundary) << "rate " << s.rate;
    ASSERT_EQ(s.checks.size(), 1u);
    EXPECT_EQ(s.checks[0].met, s.met);
    EXPECT_DOUBLE_EQ(s.checks[0].observed, server.step(s.rate).e2e.p99);
  }
}

TEST(CapacityFinder, TighterPrecisionGetsCloser) {
  const SimulatedServer server{200, 0.1, 0};
  CapacityFinderConfig config;
  config.slos = {{Metric::E2E, 99, 0.4}};  // boundary 150
  config.start_rate = 3;
  config.precision = 0.005;
  CapacityFinder finder(config);
  const CapacityResult r = run(finder, server);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.sustainable_rate, 150);
  EXPECT_GE(r.sustainable_rate, 150 * (1 - 0.005));
}

TEST(CapacityFinder, StartRateTooHighSearchesDownward) {
  const SimulatedServer server;
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
  const SimulatedServer server;
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
  CapacityFinder finder(config);
  const CapacityResult r = run(finder, failing);
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.stop_reason, "no rate down to the minimum met the SLOs");
  EXPECT_EQ(r.steps.size(), 3u);  // 1, 0.5, 0.25

  RunSummary empty;
  empty.requests = 10;
  empty.succeeded = 10;  // but no E2E samples recorded
  EXPECT_FALSE(evaluate_step(empty, config).met);
}

TEST(CapacityFinder, RejectsBadConfigs) {
  CapacityFinderConfig config;
  EXPECT_THROW(CapacityFinder{config}, Error);  // no SLOs
  config.slos = {{Metric::TTFT, 99.9, 1}};
  EXPECT_THROW(CapacityFinder{config}, Error);  // percentile not 90/95/99
  config.slos = {{Metric::TTFT, 99, 1}};
  config.ramp_factor = 1;
  EXPECT_THROW(CapacityFinder{config}, Error);
}

}  // namespace
}  // namespace db::loadtest

// Arrival processes: mean gap and dispersion with a fixed seed, reproducibility,
// and the measurement window's warm-up / cool-down selection.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "loadtest/arrivals.h"
#include "loadtest/measurement_window.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

struct GapStats {
  double mean = 0, cv = 0;
};

GapStats gap_stats(ArrivalProcess& p, int n = 20000) {
  std::vector<double> gaps;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    gaps.push_back(p.next_gap());
    EXPECT_GE(gaps.back(), 0);
    sum += gaps.back();
  }
  const double mean = sum / n;
  double sq = 0;
  for (double g : gaps) sq += (g - mean) * (g - mean);
  return {mean, std::sqrt(sq / n) / mean};
}

TEST(Arrivals, PoissonHasMeanOneOverRateAndUnitCv) {
  PoissonArrivals p(5.0, /*seed=*/42);
  const GapStats s = gap_stats(p);
  EXPECT_NEAR(s.mean, 0.2, 0.02 * 0.2);
  EXPECT_NEAR(s.cv, 1.0, 0.03);
  EXPECT_FALSE(p.closed_loop());
}

TEST(Arrivals, GammaCvIsOneOverSqrtBurstiness) {
  for (double b : {0.25, 0.5, 1.0, 4.0}) {
    GammaArrivals g(8.0, b, /*seed=*/7);
    const GapStats s = gap_stats(g);
    EXPECT_NEAR(s.mean, 0.125, 0.03 * 0.125) << "b=" << b;
    EXPECT_NEAR(s.cv, 1.0 / std::sqrt(b), 0.05 / std::sqrt(b)) << "b=" << b;
  }
}

TEST(Arrivals, ConstantHasNoDispersion) {
  ConstantArrivals c(4.0);
  const GapStats s = gap_stats(c, 1000);
  EXPECT_DOUBLE_EQ(s.mean, 0.25);
  EXPECT_EQ(s.cv, 0);
}

TEST(Arrivals, ClosedLoopIsAMarkerWithConcurrency) {
  const auto p = make_arrivals({ArrivalSpec::Kind::ClosedLoop, 0, 1, /*concurrency=*/8, 0});
  EXPECT_TRUE(p->closed_loop());
  EXPECT_EQ(p->concurrency(), 8);
  EXPECT_EQ(p->next_gap(), 0);
  EXPECT_THROW(ClosedLoop(0), Error);
}

TEST(Arrivals, SameSeedSameGapsOtherSeedOtherGaps) {
  for (ArrivalSpec::Kind kind : {ArrivalSpec::Kind::Poisson, ArrivalSpec::Kind::Gamma}) {
    ArrivalSpec spec{kind, 3.0, 0.5, 1, 99};
    auto a = make_arrivals(spec), b = make_arrivals(spec);
    spec.seed = 100;
    auto c = make_arrivals(spec);
    bool differs = false;
    for (int i = 0; i < 100; ++i) {
      const double ga = a->next_gap();
      EXPECT_EQ(ga, b->next_gap());
      differs = differs || ga != c->next_gap();
    }
    EXPECT_TRUE(differs);
  }
}

TEST(Arrivals, RejectsNonPositiveParameters) {
  EXPECT_THROW(PoissonArrivals(0, 1), Error);
  EXPECT_THROW(GammaArrivals(1, 0, 1), Error);
  EXPECT_THROW(ConstantArrivals(-1), Error);
  EXPECT_EQ(make_arrivals({ArrivalSpec::Kind::Gamma, 2, 0.5, 1, 0})->concurrency(), 0);
}

TEST(MeasurementWindow, LeavesOutWarmupAndCooldown) {
  const MeasurementWindow w{100.0, 160.0, 10.0, 5.0};
  EXPECT_DOUBLE_EQ(w.duration(), 45.0);
  const std::vector<double> starts{100.0, 109.9, 110.0, 130.0, 155.0, 155.1, 160.0};
  EXPECT_EQ(counted_requests(starts, w), (std::vector<bool>{false, false, true, true, true, false, false}));
  const MeasurementWindow overlapping{0.0, 10.0, 6.0, 6.0};
  EXPECT_EQ(overlapping.duration(), 0);
  EXPECT_FALSE(overlapping.counts(5.0));
}

}  // namespace
}  // namespace db::loadtest

#include "sample/weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace db {
namespace {

TEST(Weights, ExpNonpositiveIsAccurate) {
  double worst = 0.0;
  for (float x = -87.0f; x <= 0.0f; x += 0.0037f) {
    const double expected = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::fabs(exp_nonpositive(x) - expected) / expected);
  }
  EXPECT_LT(worst, 2.5e-7);
}

TEST(Weights, ExpNonpositiveEdges) {
  EXPECT_EQ(exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(-0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp_nonpositive(-88.0f), 0.0f);
  EXPECT_EQ(exp_nonpositive(-1e30f), 0.0f);
  EXPECT_GT(exp_nonpositive(-87.0f), 0.0f);
  EXPECT_NEAR(exp_nonpositive(-1.0f), std::exp(-1.0), 1e-7);
}

TEST(Weights, ExpWeightsScalesByTemperatureAndSums) {
  const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, -std::numeric_limits<float>::infinity()};
  std::vector<float> w(logits.size());
  const double sum = exp_weights(logits.data(), 5, 3.0f, 0.5f, w.data());
  double expected_sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double expected = std::exp((logits[i] - 3.0) * 0.5);
    EXPECT_NEAR(w[i], expected, 1e-7 * expected + 1e-30) << i;
    expected_sum += expected;
  }
  EXPECT_EQ(w[1], 1.0f);
  EXPECT_EQ(w[4], 0.0f);
  EXPECT_NEAR(sum, expected_sum, 1e-6);
  EXPECT_NEAR(sum_exp_weights(logits.data(), 5, 3.0f, 0.5f), sum, 1e-12);
}

TEST(Weights, SumOverManyChunks) {
  std::vector<float> logits(1000);
  double expected = 0.0;
  for (int i = 0; i < 1000; ++i) {
    logits[i] = -0.01f * i;
    expected += std::exp(static_cast<double>(logits[i]));
  }
  EXPECT_NEAR(sum_exp_weights(logits.data(), 1000, 0.0f, 1.0f), expected, 1e-5);
}

}  // namespace
}  // namespace db

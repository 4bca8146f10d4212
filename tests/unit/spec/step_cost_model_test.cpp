#include "spec/step_cost_model.h"

#include <gtest/gtest.h>

namespace db {
namespace {

// A bucket's first step is a warm-up; the second is its first measurement.
void record_step(StepCostModel& m, int32_t tokens, double seconds) {
  m.observe(tokens, seconds);
  m.observe(tokens, seconds);
}

TEST(StepCostModel, UnmeasuredIsUnknown) {
  StepCostModel m;
  EXPECT_FALSE(m.seconds(1).has_value());
  record_step(m, 4, 0.01);
  EXPECT_DOUBLE_EQ(*m.seconds(4), 0.01);
  EXPECT_FALSE(m.seconds(8).has_value()) << "nothing measured above it";
  EXPECT_FALSE(m.seconds(2).has_value()) << "nothing measured below it";
}

TEST(StepCostModel, InterpolatesBetweenMeasuredSizes) {
  StepCostModel m;
  record_step(m, 2, 0.010);
  record_step(m, 10, 0.018);
  EXPECT_NEAR(*m.seconds(6), 0.014, 1e-12);
  record_step(m, 100, 0.1);
  EXPECT_NEAR(*m.seconds(40), 0.018 + 0.082 * 30 / 90, 1e-12);
  EXPECT_NEAR(*m.seconds(200), 0.1 + 0.082 * 100 / 90, 1e-12) << "extrapolated along the highest two";
}

TEST(StepCostModel, PointsSitAtTheMeanTokensOfTheirSteps) {
  StepCostModel m;
  record_step(m, 1, 0.010);
  record_step(m, 300, 0.300);  // bucket [256, 512)
  EXPECT_NEAR(*m.seconds(300), 0.300, 1e-12);
  EXPECT_NEAR(*m.seconds(150), 0.010 + 0.290 * 149 / 299, 1e-12);
  EXPECT_NEAR(*m.seconds(400), 0.300 + 0.290 * 100 / 299, 1e-12);
}

TEST(StepCostModel, FollowsChangesWithAWeightedMean) {
  StepCostModel m;
  m.observe(1, 1.0);
  m.observe(1, 1.0);
  for (int i = 0; i < 100; ++i) m.observe(1, 2.0);
  EXPECT_NEAR(*m.seconds(1), 2.0, 1e-3);
}

TEST(StepCostModel, TheFirstStepOfABucketIsAWarmUp) {
  StepCostModel m;
  m.observe(6, 0.070);  // cold
  EXPECT_FALSE(m.seconds(6).has_value());
  m.observe(6, 0.020);
  EXPECT_DOUBLE_EQ(*m.seconds(6), 0.020);
}

TEST(StepCostModel, Buckets) {
  EXPECT_EQ(StepCostModel::bucket_of(1), 0);
  EXPECT_EQ(StepCostModel::bucket_of(16), 15);
  EXPECT_EQ(StepCostModel::bucket_of(17), 16);
  EXPECT_EQ(StepCostModel::bucket_of(31), 16);
  EXPECT_EQ(StepCostModel::bucket_of(32), 17);
  EXPECT_EQ(StepCostModel::bucket_of(1 << 30), StepCostModel::kBuckets - 1);
}

}  // namespace
}  // namespace db

#include "sample/philox.h"

#include <gtest/gtest.h>

#include <set>

#include "sample/sampler_state.h"

namespace db {
namespace {

// Known-answer vectors of the reference Philox4x32-10 (Random123 kat_vectors).
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, UniformRange) {
  EXPECT_EQ(philox_uniform({0, 0, 0, 0}), 0.0);
  const double top = philox_uniform({0xffffffffu, 0xffffffffu, 0, 0});
  EXPECT_LT(top, 1.0);
  EXPECT_GT(top, 1.0 - 1e-15);
}

TEST(SamplerState, UniformIsAFunctionOfSeedStreamStepLane) {
  const SamplerState a{42, 0};
  const SamplerState b{42, 0};
  for (uint64_t step = 0; step < 100; ++step) EXPECT_EQ(a.uniform(step), b.uniform(step));
  EXPECT_NE(a.uniform(0), a.uniform(1));
  EXPECT_NE(a.uniform(0), a.uniform(0, 1));
  EXPECT_NE(a.uniform(0), (SamplerState{43, 0}.uniform(0)));
  EXPECT_NE(a.uniform(0), (SamplerState{42, 1}.uniform(0)));
  EXPECT_NE(a.uniform(0), (SamplerState{42ull | (1ull << 40), 0}.uniform(0)));
  EXPECT_NE(a.uniform(5), a.uniform(5ull | (1ull << 33)));
}

TEST(SamplerState, UniformMeanAndSpread) {
  const SamplerState s{7, 0};
  double sum = 0.0;
  int low = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double u = s.uniform(i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    low += u < 0.1;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.01);
  EXPECT_NEAR(low / double(n), 0.1, 0.01);
}

TEST(SamplerState, ForRequestUsesTheSeedOrRandomDevice) {
  SamplingParams p;
  p.seed = 1234;
  const SamplerState seeded = SamplerState::for_request(p, 3);
  EXPECT_EQ(seeded.seed, 1234u);
  EXPECT_EQ(seeded.stream, 3u);
  p.seed.reset();
  std::set<uint64_t> seeds;
  for (int i = 0; i < 8; ++i) seeds.insert(SamplerState::for_request(p).seed);
  EXPECT_GT(seeds.size(), 1u);
}

}  // namespace
}  // namespace db

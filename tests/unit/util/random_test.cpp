// The seeded Rng: the same sequence from a seed on every standard library, so
// synthetic workloads (loadtest and bench) are reproducible anywhere.
#include "util/random.h"

#include <gtest/gtest.h>

#include <cmath>

namespace db {
namespace {

TEST(Rng, MatchesTheReferenceSequenceForSeedZero) {  // std::mt19937_64's, fixed by the standard
  Rng rng(0);
  EXPECT_EQ(rng.next(), 0x28E837C5CB41DC3Eull);
  EXPECT_EQ(rng.next(), 0xFDFD3A7C3E40F98Bull);
  EXPECT_EQ(rng.next(), 0x0A213217F032E8B9ull);
}

TEST(Rng, BelowScalesTheTopBits) {
  Rng rng(0);
  EXPECT_EQ(rng.below(10), 1u);  // 0x28E8... / 2^64 = 0.160
  EXPECT_EQ(rng.below(10), 9u);  // 0xFDFD... / 2^64 = 0.992
  EXPECT_EQ(rng.below(10), 0u);  // 0x0A21... / 2^64 = 0.040
  EXPECT_EQ(rng.below(1), 0u);
}

TEST(Rng, UniformAndNormalStayInRange) {
  Rng rng(7);
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    const double u = rng.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += rng.normal();
  }
  EXPECT_LT(std::abs(sum / 10000), 0.05);
}

}  // namespace
}  // namespace db

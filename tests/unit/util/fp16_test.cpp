#include "util/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "util/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace db {
namespace {

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fp16_to_f32(f32_to_fp16(f)))) << std::hex << h;
      continue;
    }
    ASSERT_EQ(f32_to_fp16(f), h) << std::hex << h;
  }
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(fp16_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(fp16_to_f32(0xC000), -2.0f);
  EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0x0001), 0x1p-24f);
  EXPECT_TRUE(std::isinf(fp16_to_f32(0x7C00)));
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);              // rounds up to infinity
  EXPECT_EQ(f32_to_fp16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(1.0f + 0x1p-11f), 0x3C00);       // tie to even
  EXPECT_EQ(f32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3C02);   // tie to even (up)
  EXPECT_EQ(f32_to_fp16(0x1p-25f), 0x0000);              // tie between 0 and the smallest subnormal
  EXPECT_EQ(f32_to_fp16(0x1.8p-25f), 0x0001);
  EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
}

TEST(Bf16, KnownValues) {
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3F808000)), 0x3F80);  // tie to even (down)
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3F818000)), 0x3F82);  // tie to even (up)
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x3F808001)), 0x3F81);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::nanf("")))));
  EXPECT_EQ(f32_to_bf16(f32_from_bits(0x7F7FFFFF)), 0x7F80);  // max float rounds to infinity
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t hw_f32_to_fp16(float f) { return _cvtss_sh(f, 0); }

// The portable conversion must agree with the F16C instruction on random bit patterns.
TEST(Fp16, MatchesF16cOnRandomFloats) {
  if (!detect_cpu_features().f16c) GTEST_SKIP() << "CPU lacks F16C";
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    const float f = f32_from_bits(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_fp16(f), hw_f32_to_fp16(f)) << std::hexfloat << f;
  }
}
#endif

}  // namespace
}  // namespace db

#include "io/fp8.h"

#include <gtest/gtest.h>

#include <cmath>

#include "io_test_util.h"
#include "util/fp16.h"

namespace db {
namespace {

TEST(Fp8, E4M3KnownValues) {
  EXPECT_EQ(fp8_e4m3_to_f32(0x00), 0.0f);
  EXPECT_TRUE(std::signbit(fp8_e4m3_to_f32(0x80)));
  EXPECT_EQ(fp8_e4m3_to_f32(0x38), 1.0f);           // exponent 7 = bias
  EXPECT_EQ(fp8_e4m3_to_f32(0x3C), 1.5f);
  EXPECT_EQ(fp8_e4m3_to_f32(0xC0), -2.0f);
  EXPECT_EQ(fp8_e4m3_to_f32(0x7E), 448.0f);         // largest finite
  EXPECT_EQ(fp8_e4m3_to_f32(0x01), 0x1p-9f);        // smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_f32(0x08), 0x1p-6f);        // smallest normal
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_f32(0xFF)));
  EXPECT_EQ(fp8_e4m3_to_f32(0x78), 256.0f);         // exponent 15 is a normal exponent in E4M3
}

TEST(Fp8, E5M2KnownValues) {
  EXPECT_EQ(fp8_e5m2_to_f32(0x3C), 1.0f);  // exponent 15 = bias
  EXPECT_EQ(fp8_e5m2_to_f32(0x3E), 1.5f);
  EXPECT_EQ(fp8_e5m2_to_f32(0x7B), 57344.0f);
  EXPECT_EQ(fp8_e5m2_to_f32(0x01), 0x1p-16f);
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_f32(0x7C)));
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_f32(0xFC)) && fp8_e5m2_to_f32(0xFC) < 0);
  EXPECT_TRUE(std::isnan(fp8_e5m2_to_f32(0x7D)));
}

// E5M2 is the top byte of an IEEE half: the decode must agree with the half's value.
TEST(Fp8, E5M2MatchesHalfPrecision) {
  for (int v = 0; v < 256; ++v) {
    const float want = fp16_to_f32(static_cast<uint16_t>(v << 8));
    const float got = fp8_e5m2_to_f32(static_cast<uint8_t>(v));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << v;
    } else {
      EXPECT_EQ(got, want) << v;
    }
  }
}

TEST(Fp8, TablesMatchTheScalarDecodeAndRejectOtherTypes) {
  const float* t = fp8_decode_table(DType::F8_E4M3);
  for (int v = 0; v < 127; ++v) EXPECT_EQ(t[v], fp8_e4m3_to_f32(static_cast<uint8_t>(v)));
  EXPECT_EQ(fp8_decode_table(DType::F8_E5M2)[0x3C], 1.0f);
  test::expect_error([] { fp8_decode_table(DType::BF16); }, {"F8_E4M3", "BF16"});
}

}  // namespace
}  // namespace db

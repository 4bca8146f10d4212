// SwiGLU per ISA level: close to the definition in double, and an element's
// result independent of where it sits in the array (batch invariance).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "kernels/cpu/activations.h"
#include "test_weights.h"

namespace db::kernels {
namespace {

using testing::random_floats;

class SwigluIsa : public ::testing::TestWithParam<IsaLevel> {};

TEST_P(SwigluIsa, MatchesDefinition) {
  const IsaLevel level = GetParam();
  if (!isa_supported(level)) GTEST_SKIP() << isa_name(level) << " is not available on this CPU";
  auto g = random_floats(1000, 1, 6.0f);
  const auto u = random_floats(1000, 2, 1.0f);
  g[0] = 0.0f, g[1] = -120.0f, g[2] = 120.0f, g[3] = -87.5f, g[4] = 95.0f;  // saturating inputs
  std::vector<float> out(g.size());
  swiglu_isa(level, g.data(), u.data(), static_cast<int64_t>(g.size()), out.data());
  for (size_t i = 0; i < g.size(); ++i) {
    const double want = double(g[i]) / (1.0 + std::exp(-double(g[i]))) * u[i];
    ASSERT_NEAR(out[i], want, 1e-6 * std::abs(want) + 1e-30) << "element " << i << " gate " << g[i];
  }
}

TEST_P(SwigluIsa, ResultDoesNotDependOnPosition) {
  const IsaLevel level = GetParam();
  if (!isa_supported(level)) GTEST_SKIP() << isa_name(level) << " is not available on this CPU";
  const auto g = random_floats(67, 3, 4.0f), u = random_floats(67, 4, 1.0f);
  std::vector<float> whole(g.size());
  swiglu_isa(level, g.data(), u.data(), static_cast<int64_t>(g.size()), whole.data());
  for (size_t begin : {size_t{1}, size_t{7}, size_t{16}, size_t{50}}) {
    for (size_t n : {size_t{1}, size_t{5}, size_t{17}}) {
      if (begin + n > g.size()) continue;
      std::vector<float> part(n);
      swiglu_isa(level, g.data() + begin, u.data() + begin, static_cast<int64_t>(n), part.data());
      EXPECT_EQ(0, std::memcmp(part.data(), whole.data() + begin, n * sizeof(float))) << begin << "+" << n;
    }
  }
}

TEST_P(SwigluIsa, OutputMayAliasGate) {
  const IsaLevel level = GetParam();
  if (!isa_supported(level)) GTEST_SKIP() << isa_name(level) << " is not available on this CPU";
  auto g = random_floats(40, 5, 3.0f);
  const auto u = random_floats(40, 6, 1.0f);
  std::vector<float> out(g.size());
  swiglu_isa(level, g.data(), u.data(), 40, out.data());
  swiglu_isa(level, g.data(), u.data(), 40, g.data());
  EXPECT_EQ(0, std::memcmp(out.data(), g.data(), out.size() * sizeof(float)));
}

// The AVX2 exponential replays the AVX-512 one's operations (its scalef as two
// multiplies), so the two vector levels agree bit for bit.
TEST(Swiglu, Avx2AndAvx512AgreeBitForBit) {
  if (!isa_supported(IsaLevel::Avx512)) GTEST_SKIP() << "avx512 is not available on this CPU";
  auto g = random_floats(4000, 7, 30.0f);
  const auto u = random_floats(g.size(), 8, 1.0f);
  const float edges[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 87.0f, -87.0f, 88.5f, -88.5f, 103.9f, -103.9f, 150.0f, -150.0f};
  for (size_t i = 0; i < std::size(edges); ++i) g[i] = edges[i];
  std::vector<float> avx2(g.size()), avx512(g.size());
  swiglu_isa(IsaLevel::Avx2, g.data(), u.data(), static_cast<int64_t>(g.size()), avx2.data());
  swiglu_isa(IsaLevel::Avx512, g.data(), u.data(), static_cast<int64_t>(g.size()), avx512.data());
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_EQ(0, std::memcmp(&avx2[i], &avx512[i], sizeof(float))) << "gate " << g[i] << ": " << avx2[i] << " vs " << avx512[i];
}

INSTANTIATE_TEST_SUITE_P(Levels, SwigluIsa,
                         ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace db::kernels

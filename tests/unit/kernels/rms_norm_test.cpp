// RMSNorm per ISA level: the same bytes as the scalar level for every length
// (whole vectors, tails, single elements) and every row count (the vector
// levels sum rows four at a time), in place too, and close to the definition
// in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/rms_norm.h"
#include "test_weights.h"

namespace db::kernels {
namespace {

using testing::random_floats;

constexpr int64_t kDims[] = {1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 576, 1000, 1536};

class RmsNormIsa : public ::testing::TestWithParam<IsaLevel> {};

TEST_P(RmsNormIsa, SameBytesAsScalar) {
  const IsaLevel level = GetParam();
  if (!isa_supported(level)) GTEST_SKIP() << isa_name(level) << " is not available on this CPU";
  for (int64_t dim : kDims)
    for (int64_t rows : {1, 3, 4, 5, 9}) {
      const auto n = static_cast<size_t>(rows * dim);
      auto x = random_floats(n, static_cast<uint32_t>(dim * 16 + rows), 3.0f);
      x[0] = 1e4f;                    // one large element
      if (dim > 2) x[n - 1] = -1e-20f;  // and a tiny one in the last row's tail
      const auto w = random_floats(static_cast<size_t>(dim), 7, 1.0f);
      std::vector<float> want(n), got(n);
      for (int64_t r = 0; r < rows; ++r)  // the scalar level, one row at a time
        rms_norm_rows_isa(IsaLevel::Scalar, x.data() + r * dim, w.data(), 1, dim, 1e-6f, want.data() + r * dim);
      rms_norm_rows_isa(level, x.data(), w.data(), rows, dim, 1e-6f, got.data());
      EXPECT_EQ(0, std::memcmp(want.data(), got.data(), n * sizeof(float))) << "dim " << dim << " rows " << rows;
    }
}

TEST_P(RmsNormIsa, MatchesDefinitionInPlace) {
  const IsaLevel level = GetParam();
  if (!isa_supported(level)) GTEST_SKIP() << isa_name(level) << " is not available on this CPU";
  constexpr int64_t kRows = 5;
  for (int64_t dim : kDims) {
    auto x = random_floats(static_cast<size_t>(kRows * dim), 11, 2.0f);
    const auto w = random_floats(static_cast<size_t>(dim), 12, 1.0f);
    const std::vector<float> x0 = x;
    rms_norm_rows_isa(level, x.data(), w.data(), kRows, dim, 1e-5f, x.data());  // y aliases x
    for (int64_t r = 0; r < kRows; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < dim; ++i) ss += double(x0[r * dim + i]) * x0[r * dim + i];
      const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + 1e-5);
      for (int64_t i = 0; i < dim; ++i) {
        const double want = w[i] * x0[r * dim + i] * inv;
        ASSERT_NEAR(x[r * dim + i], want, 1e-5 * std::abs(want) + 1e-7) << "dim " << dim << " row " << r << " element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, RmsNormIsa,
                         ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace db::kernels

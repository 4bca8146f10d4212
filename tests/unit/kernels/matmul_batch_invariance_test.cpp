// Batch invariance: a token's output row must be bit-identical whatever other
// tokens share the call (1 token alone, inside 64, at any offset) and whatever
// the thread count. The batching core's "same answer alone or in a batch"
// guarantee rests on this.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/matmul_dispatch.h"
#include "test_weights.h"

namespace db::kernels {
namespace {

class MatmulBatchInvariance : public ::testing::TestWithParam<std::tuple<DType, IsaLevel>> {};

TEST_P(MatmulBatchInvariance, RowOfABatchEqualsTheTokenAlone) {
  const auto [dtype, isa] = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not available on this CPU";
  // 512: whole groups of blocks; 576 and 608: rows that end in partial groups.
  for (const int64_t cols : {int64_t{512}, int64_t{576}, int64_t{608}}) {
    if (cols % block_size(dtype) != 0) continue;
    SCOPED_TRACE("cols " + std::to_string(cols));
    const int64_t rows = 37, n_tokens = 64;
    const auto w = testing::make_weights(dtype, rows, cols, 7);
    const auto x = testing::make_activations(n_tokens, cols, 11);
    ThreadPool pool2(2), pool1(1);
    std::vector<float> all(static_cast<size_t>(n_tokens * rows));
    matmul_isa(isa, w.view(), x.data(), n_tokens, all.data(), pool2);
    for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{31}, int64_t{63}}) {
      std::vector<float> one(static_cast<size_t>(rows));
      matmul_isa(isa, w.view(), x.data() + t * cols, 1, one.data(), pool1);
      EXPECT_EQ(0, std::memcmp(one.data(), all.data() + t * rows, one.size() * sizeof(float)))
          << "token " << t << " differs alone vs in a batch of " << n_tokens;
      // The same token inside a batch of 3 starting at it.
      if (t + 3 <= n_tokens) {
        std::vector<float> three(static_cast<size_t>(3 * rows));
        matmul_isa(isa, w.view(), x.data() + t * cols, 3, three.data(), pool2);
        EXPECT_EQ(0, std::memcmp(three.data(), all.data() + t * rows, three.size() * sizeof(float)))
            << "tokens " << t << ".." << t + 2 << " differ in a batch of 3";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatmulBatchInvariance,
                         ::testing::Combine(::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q4_0,
                                                              DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                                                              DType::Q4_K, DType::Q5_K, DType::Q6_K),
                                            ::testing::ValuesIn(kIsaLevels)));

}  // namespace
}  // namespace db::kernels

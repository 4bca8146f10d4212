// The fused entry points (matmul_group, matmul_heads, matmul_swiglu) give bit
// for bit what the separate matmul() and swiglu() calls give, for any token and
// thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/activations.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "test_weights.h"
#include "util/error.h"

namespace db::kernels {
namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(MatmulGroup, EqualsSeparateProductsOfMixedDtypes) {
  const int64_t cols = 512;
  const testing::TestWeights ws[] = {testing::make_weights(DType::Q4_1, 70, cols, 1),
                                     testing::make_weights(DType::Q8_0, 9, cols, 2),
                                     testing::make_weights(DType::Q4_K, 33, cols, 3),
                                     testing::make_weights(DType::F16, 5, cols, 4)};
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n_tokens : {int64_t{1}, int64_t{4}, int64_t{19}}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + " tokens " + std::to_string(n_tokens));
      const auto x = testing::make_activations(n_tokens, cols, 5);
      std::vector<TensorView> views;
      for (const auto& w : ws) views.push_back(w.view());
      std::vector<std::vector<float>> grouped, separate;
      std::vector<MatmulTask> tasks;
      for (const auto& w : ws) {
        grouped.emplace_back(static_cast<size_t>(n_tokens * w.rows), -1.0f);
        separate.emplace_back(static_cast<size_t>(n_tokens * w.rows), -2.0f);
      }
      for (size_t i = 0; i < views.size(); ++i) tasks.push_back({&views[i], grouped[i].data()});
      matmul_group(tasks.data(), static_cast<int>(tasks.size()), x.data(), n_tokens, pool);
      for (size_t i = 0; i < views.size(); ++i) matmul(views[i], x.data(), n_tokens, separate[i].data(), pool);
      for (size_t i = 0; i < views.size(); ++i) EXPECT_TRUE(same_bits(grouped[i], separate[i])) << "task " << i;
    }
  }
}

TEST(MatmulGroup, RejectsMismatchedRowLengths) {
  const auto a = testing::make_weights(DType::Q4_1, 4, 64, 1), b = testing::make_weights(DType::Q4_1, 4, 96, 2);
  const TensorView va = a.view(), vb = b.view();
  std::vector<float> x(96), ya(4), yb(4);
  const MatmulTask tasks[2] = {{&va, ya.data()}, {&vb, yb.data()}};
  ThreadPool pool(1);
  EXPECT_THROW(matmul_group(tasks, 2, x.data(), 1, pool), Error);
}

// One product per "head", each over its own columns of shared token rows,
// written interleaved into one output (ldy): as separate matmul() calls on the
// heads' rows copied out, in the Rows layout and repacked, for every weight
// type a decoder uses per head.
TEST(MatmulHeads, EqualsSeparateProductsOnOwnColumns) {
  const int heads = 5;
  const int64_t rows = 40, cols = 128;
  // Each head's input is followed by columns it must not read (as q_nope is by
  // q_pe), and each token row by more: they hold NaN, which would reach an output.
  const int64_t head_stride = cols + 48, ldx = heads * head_stride + 16;
  for (DType dtype : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0}) {
    std::vector<testing::TestWeights> ws;
    for (int h = 0; h < heads; ++h) ws.push_back(testing::make_weights(dtype, rows, cols, 20 + h));
    PackedWeightStore packed;
    for (bool pack : {false, true}) {
      std::vector<TensorView> views;
      for (const auto& w : ws) views.push_back(pack ? packed.prepare(w.view()) : w.view());
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{40}}) {
          SCOPED_TRACE(dtype_name(dtype) + (pack ? " packed" : " rows") + " threads " + std::to_string(threads) +
                       " tokens " + std::to_string(n));
          std::vector<float> x(static_cast<size_t>(n * ldx), std::nanf(""));
          std::vector<std::vector<float>> own;  // head h's rows, contiguous
          for (int h = 0; h < heads; ++h) {
            own.push_back(testing::make_activations(n, cols, 40 + h));
            for (int64_t t = 0; t < n; ++t)
              std::copy_n(own[h].data() + t * cols, cols, x.data() + t * ldx + h * head_stride);
          }
          const int64_t ldy = heads * rows + 3;
          std::vector<float> side_by_side(static_cast<size_t>(n * ldy), -1.0f);
          std::vector<MatmulTask> tasks;
          for (int h = 0; h < heads; ++h) tasks.push_back({&views[h], side_by_side.data() + h * rows, ldy});
          matmul_heads(tasks.data(), heads, x.data(), ldx, head_stride, n, pool);
          for (int h = 0; h < heads; ++h) {
            std::vector<float> want(static_cast<size_t>(n * rows)), got(static_cast<size_t>(n * rows));
            matmul(views[h], own[h].data(), n, want.data(), pool);
            for (int64_t t = 0; t < n; ++t)
              std::copy_n(side_by_side.data() + t * ldy + h * rows, rows, got.data() + t * rows);
            EXPECT_TRUE(same_bits(got, want)) << "head " << h;
          }
          for (int64_t t = 0; t < n; ++t)
            for (int64_t pad = heads * rows; pad < ldy; ++pad) EXPECT_EQ(side_by_side[t * ldy + pad], -1.0f);
        }
      }
    }
  }
}

TEST(MatmulSwiglu, EqualsTwoProductsThenSwiglu) {
  for (DType dtype : {DType::Q4_1, DType::Q8_0, DType::Q4_0, DType::F32}) {
    const int64_t rows = 150, cols = 576;
    const auto gate = testing::make_weights(dtype, rows, cols, 6), up = testing::make_weights(dtype, rows, cols, 7);
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      for (int64_t n_tokens : {int64_t{1}, int64_t{3}, int64_t{17}}) {
        SCOPED_TRACE(dtype_name(dtype) + " threads " + std::to_string(threads) + " tokens " +
                     std::to_string(n_tokens));
        const auto x = testing::make_activations(n_tokens, cols, 8);
        const size_t n = static_cast<size_t>(n_tokens * rows);
        std::vector<float> fused(n), scratch(n), g(n), u(n);
        matmul_swiglu(gate.view(), up.view(), x.data(), n_tokens, fused.data(), scratch.data(), pool);
        matmul(gate.view(), x.data(), n_tokens, g.data(), pool);
        matmul(up.view(), x.data(), n_tokens, u.data(), pool);
        swiglu(g.data(), u.data(), static_cast<int64_t>(n), g.data());
        EXPECT_TRUE(same_bits(fused, g));
      }
    }
  }
}

TEST(MatmulSwiglu, RejectsDifferentShapes) {
  const auto a = testing::make_weights(DType::Q4_1, 4, 64, 1), b = testing::make_weights(DType::Q4_1, 5, 64, 2);
  std::vector<float> x(64), y(5), s(5);
  ThreadPool pool(1);
  EXPECT_THROW(matmul_swiglu(a.view(), b.view(), x.data(), 1, y.data(), s.data(), pool), Error);
}

}  // namespace
}  // namespace db::kernels

// The Panels16 weight layout (kernels/cpu/panels.h, kernels/packed_weights.h):
// packing is lossless, every ISA level's panel kernel equals the scalar one bit
// for bit, products match the dequantized reference, and a token's row does not
// depend on the batch it runs in.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/activations.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/cpu/panels.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "test_weights.h"

namespace db::kernels {
namespace {

class PanelTest : public ::testing::TestWithParam<DType> {};

// Rows that fill whole groups, end in a partial group, or are fewer than one group.
const int64_t kRowCounts[] = {16, 37, 5};
// One block, an odd block count, the default model's widths (those that are
// whole blocks of the format under test: K-quants take 256, 768 and 1536).
const int64_t kColCounts[] = {32, 96, 256, 576, 768, 1536};

bool fits(DType dtype, int64_t cols) { return cols % panel_block_elems(dtype) == 0; }

// A width of about `cols` that is whole blocks of dtype.
int64_t width(DType dtype, int64_t cols) { return (cols + panel_block_elems(dtype) - 1) / panel_block_elems(dtype) * panel_block_elems(dtype); }

TensorView packed_view(PackedWeightStore& store, const testing::TestWeights& w) {
  const TensorView v = store.prepare(w.view(), IsaLevel::Avx512Vnni);
  EXPECT_EQ(v.layout, TensorLayout::Panels16);
  return v;
}

// w's packed view times the n_tokens rows of x, at this CPU's best level.
std::vector<float> packed_product(const testing::TestWeights& w, const std::vector<float>& x, int64_t n_tokens) {
  PackedWeightStore store;
  const TensorView p = packed_view(store, w);
  ThreadPool pool(2);
  std::vector<float> y(static_cast<size_t>(n_tokens * p.rows()));
  matmul_isa(cpu_features().best, p, x.data(), n_tokens, y.data(), pool);
  return y;
}

TEST_P(PanelTest, PackingKeepsEveryRow) {
  const DType dtype = GetParam();
  for (int64_t rows : kRowCounts)
    for (int64_t cols : kColCounts) {
      if (!fits(dtype, cols)) continue;
      const auto w = testing::make_weights(dtype, rows, cols, 3);
      PackedWeightStore store;
      const TensorView p = packed_view(store, w);
      std::vector<uint8_t> row(row_bytes(dtype, cols));
      std::vector<float> got(static_cast<size_t>(cols)), want(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        unpack_panel_row(dtype, static_cast<const uint8_t*>(p.data), cols, r, row.data());
        ASSERT_EQ(0, std::memcmp(row.data(), w.view().row(r), row.size())) << "row " << r << " of " << rows;
        dequantize_row(p, r, got.data());
        dequantize_row(w.view(), r, want.data());
        ASSERT_EQ(got, want) << "row " << r;
      }
    }
}

TEST_P(PanelTest, EveryIsaEqualsScalarBitForBit) {
  const DType dtype = GetParam();
  ThreadPool pool(2);
  for (int64_t rows : kRowCounts)
    for (int64_t cols : kColCounts)
      for (int64_t n_tokens : {1, 3, 8, 11, 15, 40, 150}) {  // 150: calls of 64, 64 and 22 tokens
        if (!fits(dtype, cols)) continue;
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + ", " + std::to_string(n_tokens) + " tokens");
        const auto w = testing::make_weights(dtype, rows, cols, 5);
        const auto x = testing::make_activations(n_tokens, cols, 9);
        PackedWeightStore store;
        const TensorView p = packed_view(store, w);
        std::vector<float> want(static_cast<size_t>(n_tokens * rows));
        matmul_isa(IsaLevel::Scalar, p, x.data(), n_tokens, want.data(), pool);
        for (int level = 1; level < kIsaLevelCount; ++level) {
          const auto isa = static_cast<IsaLevel>(level);
          if (!isa_supported(isa)) {
            std::printf("[ note ] %s not available on this CPU: its panel kernel is not tested here\n", isa_name(isa));
            continue;
          }
          std::vector<float> got(want.size());
          matmul_isa(isa, p, x.data(), n_tokens, got.data(), pool);
          ASSERT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << isa_name(isa);
        }
      }
}

// The packed product against the exact float product of the dequantized
// weights: only activation quantization separates them.
TEST_P(PanelTest, MatchesTheDequantizedProduct) {
  const DType dtype = GetParam();
  const int64_t rows = 37, cols = width(dtype, 576), n_tokens = 9;
  const auto w = testing::make_weights(dtype, rows, cols, 13);
  const auto x = testing::make_activations(n_tokens, cols, 17);
  const std::vector<float> y = packed_product(w, x, n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      double exact = 0.0, magnitude = 0.0;
      for (int64_t i = 0; i < cols; ++i) {
        const double prod = double{w.values[r * cols + i]} * x[t * cols + i];
        exact += prod;
        magnitude += std::fabs(prod);
      }
      // 8-bit activations: each product is off by at most half a step (1/254 of the block maximum).
      EXPECT_NEAR(y[t * rows + r], exact, 0.01 * magnitude + 1e-4) << "token " << t << " row " << r;
    }
}

TEST_P(PanelTest, RowOfABatchEqualsTheTokenAlone) {
  const DType dtype = GetParam();
  const int64_t rows = 37, cols = width(dtype, 608), n_tokens = 64;
  const auto w = testing::make_weights(dtype, rows, cols, 7);
  const auto x = testing::make_activations(n_tokens, cols, 11);
  PackedWeightStore store;
  const TensorView p = packed_view(store, w);
  ThreadPool pool2(2), pool1(1);
  std::vector<float> all(static_cast<size_t>(n_tokens * rows));
  matmul_isa(cpu_features().best, p, x.data(), n_tokens, all.data(), pool2);
  for (int64_t t : {0, 1, 7, 8, 9, 31, 63}) {
    std::vector<float> one(static_cast<size_t>(rows));
    matmul_isa(cpu_features().best, p, x.data() + t * cols, 1, one.data(), pool1);
    EXPECT_EQ(0, std::memcmp(one.data(), all.data() + t * rows, one.size() * sizeof(float)))
        << "token " << t << " differs alone vs in a batch of " << n_tokens;
  }
}

// The feed-forward gate over packed weights (a fused kernel at the VNNI level)
// equals the two products followed by swiglu(), bit for bit, at any batch size.
TEST_P(PanelTest, FusedGateEqualsProductsThenSwiglu) {
  const DType dtype = GetParam();
  const int64_t rows = 1536 + 5, cols = width(dtype, 576);
  const auto gate = testing::make_weights(dtype, rows, cols, 21), up = testing::make_weights(dtype, rows, cols, 22);
  PackedWeightStore store;
  const TensorView g = packed_view(store, gate), u = packed_view(store, up);
  ThreadPool pool(2);
  for (int64_t n_tokens : {1, 7, 8, 37}) {
    const auto x = testing::make_activations(n_tokens, cols, 23);
    const size_t n = static_cast<size_t>(n_tokens * rows);
    std::vector<float> want_g(n), want_u(n), got(n), scratch(n);
    matmul(g, x.data(), n_tokens, want_g.data(), pool);
    matmul(u, x.data(), n_tokens, want_u.data(), pool);
    swiglu(want_g.data(), want_u.data(), static_cast<int64_t>(n), want_g.data());
    matmul_swiglu(g, u, x.data(), n_tokens, got.data(), scratch.data(), pool);
    EXPECT_EQ(0, std::memcmp(got.data(), want_g.data(), n * sizeof(float))) << n_tokens << " tokens";
  }
}

TEST(PanelLayout, QuantizedFormatsPackAtVnniAndAvx2FloatsAtBothAvx512Levels) {
  for (DType t : kPanelDTypes) {
    const bool is_float = t == DType::F32 || t == DType::F16 || t == DType::BF16;
    EXPECT_TRUE(prefers_packed(t, IsaLevel::Avx512Vnni)) << dtype_name(t);
    EXPECT_TRUE(prefers_packed(t, IsaLevel::Amx)) << dtype_name(t);
    EXPECT_EQ(prefers_packed(t, IsaLevel::Avx512), is_float) << dtype_name(t);
    EXPECT_EQ(prefers_packed(t, IsaLevel::Avx2), !is_float) << dtype_name(t);
    EXPECT_EQ(prefers_packed(t, IsaLevel::Avx2Vnni), !is_float) << dtype_name(t);
    EXPECT_FALSE(prefers_packed(t, IsaLevel::Scalar)) << dtype_name(t);
  }
  EXPECT_FALSE(prefers_packed(DType::Q2_K, IsaLevel::Avx512Vnni));
  const auto w = testing::make_weights(DType::BF16, 16, 256, 1);
  PackedWeightStore store;
  const TensorView v = store.prepare(w.view(), IsaLevel::Avx2);
  EXPECT_EQ(v.layout, TensorLayout::Rows);
  EXPECT_EQ(v.data, w.view().data);
  EXPECT_EQ(store.bytes(), 0u);
}

// Float panels cut long products into element blocks (the kernels continue
// each sum from y): the sums must come out as one pass in element order, for
// a width that is not a multiple of the block and a token count with a
// partial tile, on every level that runs the packed layout.
TEST(PanelLayout, FloatProductsAreOneFusedMultiplyAddPerElementInOrder) {
  const int64_t rows = 21, cols = 700, n_tokens = 37;
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    const auto w = testing::make_weights(dtype, rows, cols, 31);
    const auto x = testing::make_activations(n_tokens, cols, 37);
    const std::vector<float> got = packed_product(w, x, n_tokens);
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t r = 0; r < rows; ++r) {
        float acc = 0.0f;
        for (int64_t k = 0; k < cols; ++k) acc = std::fma(w.values[r * cols + k], x[t * cols + k], acc);
        ASSERT_EQ(got[t * rows + r], acc) << dtype_name(dtype) << " token " << t << " row " << r;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPanelFormats, PanelTest, ::testing::ValuesIn(kPanelDTypes),
                         [](const auto& info) { return dtype_name(info.param); });

}  // namespace
}  // namespace db::kernels

// matmul for every weight dtype x ISA level against
//  (a) a double-precision reference on the dequantized weights and the
//      unquantized activations, within the error that 8-bit activation
//      quantization can cause: |y - ref| <= sum_i |w_i| * d(i) / 2, d(i) the
//      activation scale of element i's block (plus float rounding slack), and
//      within 1e-2 * |w_row| * |x| (the usual statement of that error);
//  (b) the scalar kernels (same quantized activations, exact integer sums;
//      only the float accumulation order differs): 2e-6 relative to sum |w x|.
#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/matmul.h"
#include "test_weights.h"

namespace db {
// Readable parameter names in test listings.
void PrintTo(DType t, std::ostream* os) { *os << dtype_name(t); }
void PrintTo(IsaLevel l, std::ostream* os) { *os << isa_name(l); }
}  // namespace db

namespace db::kernels {
namespace {

using testing::make_activations;
using testing::make_weights;
using testing::TestWeights;

// Activation block scale for element i of token t (0 for float weights, which use x as is).
std::vector<float> act_scales(DType dtype, const std::vector<float>& x, int64_t n_tokens, int64_t cols) {
  std::vector<float> d(x.size(), 0.0f);
  if (!is_quantized(dtype)) return d;
  const int64_t blk = block_size(dtype) == 256 ? 256 : 32;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t b = 0; b < cols / blk; ++b) {
      float amax = 0.0f;
      for (int64_t j = 0; j < blk; ++j) amax = std::max(amax, std::fabs(x[static_cast<size_t>(t * cols + b * blk + j)]));
      for (int64_t j = 0; j < blk; ++j) d[static_cast<size_t>(t * cols + b * blk + j)] = amax / 127.0f;
    }
  return d;
}

struct Expectation {
  double ref = 0, mag = 0, quant_bound = 0, norm_bound = 0;
};

Expectation expect(const TestWeights& w, const std::vector<float>& x, const std::vector<float>& d, int64_t t,
                   int64_t o) {
  Expectation e;
  double wn = 0, xn = 0;
  for (int64_t i = 0; i < w.cols; ++i) {
    const double wi = w.values[static_cast<size_t>(o * w.cols + i)];
    const double xi = x[static_cast<size_t>(t * w.cols + i)];
    e.ref += wi * xi;
    e.mag += std::fabs(wi * xi);
    e.quant_bound += std::fabs(wi) * d[static_cast<size_t>(t * w.cols + i)] * 0.5;
    wn += wi * wi;
    xn += xi * xi;
  }
  e.norm_bound = 1e-2 * std::sqrt(wn * xn);
  return e;
}

std::vector<float> run(IsaLevel isa, const TestWeights& w, const std::vector<float>& x, int64_t n_tokens,
                       ThreadPool& pool) {
  std::vector<float> y(static_cast<size_t>(n_tokens * w.rows), std::nanf(""));
  matmul_isa(isa, w.view(), x.data(), n_tokens, y.data(), pool);
  return y;
}

using Param = std::tuple<DType, IsaLevel>;

class MatmulIsa : public ::testing::TestWithParam<Param> {};

TEST_P(MatmulIsa, MatchesReferenceOnOddShapes) {
  const auto [dtype, isa] = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << "CPU lacks the " << isa_name(isa) << " ISA level; skipping";
  const int64_t bs = block_size(dtype);
  const std::vector<int64_t> col_choices =
      bs == 1 ? std::vector<int64_t>{5, 333} : std::vector<int64_t>{bs, (bs == 32 ? 9 : 5) * bs};
  ThreadPool pool1(1), pool3(3);
  uint32_t seed = 1;
  for (int64_t cols : col_choices) {
    for (int64_t rows : {1, 13, 66}) {
      const TestWeights w = make_weights(dtype, rows, cols, seed++);
      for (int64_t n_tokens : {1, 2, 3, 7, 17, 64}) {
        SCOPED_TRACE(dtype_name(dtype) + " " + isa_name(isa) + " rows " + std::to_string(rows) + " cols " +
                     std::to_string(cols) + " tokens " + std::to_string(n_tokens));
        const auto x = make_activations(n_tokens, cols, seed++);
        const auto d = act_scales(dtype, x, n_tokens, cols);
        const auto y = run(isa, w, x, n_tokens, pool3);
        const auto y_scalar = isa == IsaLevel::Scalar ? y : run(IsaLevel::Scalar, w, x, n_tokens, pool1);
        if (rows == 13) {  // the thread split never changes a result
          const auto y1 = run(isa, w, x, n_tokens, pool1);
          for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y1[i], y[i]) << "1 vs 3 threads, output " << i;
        }
        for (int64_t t = 0; t < n_tokens; ++t)
          for (int64_t o = 0; o < rows; ++o) {
            const Expectation e = expect(w, x, d, t, o);
            const double got = y[static_cast<size_t>(t * rows + o)];
            const double err = std::fabs(got - e.ref);
            ASSERT_LE(err, e.quant_bound * 1.001 + 2e-5 * e.mag + 1e-6) << "token " << t << " row " << o;
            ASSERT_LE(err, e.norm_bound + 1e-6) << "token " << t << " row " << o;
            const double vs_scalar = std::fabs(got - y_scalar[static_cast<size_t>(t * rows + o)]);
            ASSERT_LE(vs_scalar, 2e-6 * e.mag + 1e-7) << "token " << t << " row " << o << " vs scalar";
          }
      }
    }
  }
}

// SmolLM2-sized decode and prefill products agree with the scalar kernels.
TEST_P(MatmulIsa, ModelSizedShapesAgreeWithScalar) {
  const auto [dtype, isa] = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << "CPU lacks the " << isa_name(isa) << " ISA level; skipping";
  if (isa == IsaLevel::Scalar) GTEST_SKIP() << "scalar is the reference here";
  const int64_t cols = block_size(dtype) == 256 ? 1536 : 576;
  const TestWeights w = make_weights(dtype, 1536, cols, 99);
  ThreadPool pool(2);
  for (int64_t n_tokens : {1, 5}) {
    const auto x = make_activations(n_tokens, cols, 7);
    const auto y = run(isa, w, x, n_tokens, pool);
    const auto y_ref = run(IsaLevel::Scalar, w, x, n_tokens, pool);
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t o = 0; o < w.rows; ++o) {
        double mag = 0;
        for (int64_t i = 0; i < cols; ++i)
          mag += std::fabs(w.values[static_cast<size_t>(o * cols + i)] * x[static_cast<size_t>(t * cols + i)]);
        const size_t k = static_cast<size_t>(t * w.rows + o);
        ASSERT_LE(std::fabs(y[k] - y_ref[k]), 2e-6 * mag + 1e-7) << "token " << t << " row " << o;
      }
  }
}

// Long rows make the driver split the tokens into several chunks (it keeps each
// chunk's activations near L2 size); every token must still be computed once.
TEST_P(MatmulIsa, LongRowsSplitIntoTokenChunks) {
  const auto [dtype, isa] = GetParam();
  if (!isa_supported(isa)) GTEST_SKIP() << "CPU lacks the " << isa_name(isa) << " ISA level; skipping";
  const int64_t cols = 40 * 1024, rows = 5, n_tokens = 19;
  const TestWeights w = make_weights(dtype, rows, cols, 3);
  const auto x = make_activations(n_tokens, cols, 4);
  const auto d = act_scales(dtype, x, n_tokens, cols);
  ThreadPool pool(2);
  const auto y = run(isa, w, x, n_tokens, pool);
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t o = 0; o < rows; ++o) {
      const Expectation e = expect(w, x, d, t, o);
      ASSERT_LE(std::fabs(y[static_cast<size_t>(t * rows + o)] - e.ref), e.quant_bound * 1.001 + 2e-5 * e.mag + 1e-6)
          << "token " << t << " row " << o;
    }
}

const DType kDtypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                         DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K};

INSTANTIATE_TEST_SUITE_P(All, MatmulIsa, ::testing::Combine(::testing::ValuesIn(kDtypes), ::testing::ValuesIn(kIsaLevels)),
                         [](const auto& info) {
                           return dtype_name(std::get<0>(info.param)) + "_" + isa_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace db::kernels

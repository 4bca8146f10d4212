// FP8 block-scaled matrices converted into every target type, against the
// exact products computed here; the Q4_K row quantizer; the quantization_config reader.
#include "model/fp8_convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "io/fp8.h"
#include "kernels/matmul.h"
#include "kernels/dequantize.h"
#include "kernels/quantize.h"
#include "kernels/quantize_k.h"
#include "model/checkpoint_quant.h"
#include "util/error.h"

namespace db {
namespace {

// A {rows, cols} E4M3 matrix with F32 block scales over bm x bn blocks (partial at the edges).
struct Fp8Matrix {
  int64_t rows, cols, bm, bn;
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  TensorView w() const { return TensorView{DType::F8_E4M3, {rows, cols}, codes.data()}; }
  TensorView s() const { return TensorView{DType::F32, {(rows + bm - 1) / bm, (cols + bn - 1) / bn}, scales.data()}; }
  float value(int64_t r, int64_t c) const {
    return fp8_e4m3_to_f32(codes[static_cast<size_t>(r * cols + c)]) *
           scales[static_cast<size_t>((r / bm) * ((cols + bn - 1) / bn) + c / bn)];
  }
};

Fp8Matrix make_fp8(int64_t rows, int64_t cols, int64_t bm, int64_t bn, uint32_t seed) {
  Fp8Matrix m{rows, cols, bm, bn, {}, {}};
  std::mt19937 rng(seed);
  m.codes.resize(static_cast<size_t>(rows * cols));
  for (uint8_t& c : m.codes) {
    c = static_cast<uint8_t>(rng() % 256);
    if ((c & 0x7F) == 0x7F) c = 0x3A;  // no NaNs
  }
  m.scales.resize(static_cast<size_t>(m.s().numel()));
  for (float& s : m.scales) s = std::ldexp(1.0f + static_cast<float>(rng() % 100) / 100.0f, -8 - static_cast<int>(rng() % 4));
  return m;
}

// Largest |converted - exact| over the matrix, and the largest |exact|.
std::pair<double, double> fp8_error(const ConvertedMatrix& out, const Fp8Matrix& m) {
  std::vector<float> row(static_cast<size_t>(m.cols));
  double err = 0, amax = 0;
  for (int64_t r = 0; r < m.rows; ++r) {
    kernels::dequantize_row(out.view(), r, row.data());
    for (int64_t c = 0; c < m.cols; ++c) {
      err = std::max(err, std::fabs(static_cast<double>(row[static_cast<size_t>(c)]) - m.value(r, c)));
      amax = std::max(amax, std::fabs(static_cast<double>(m.value(r, c))));
    }
  }
  return {err, amax};
}

TEST(Fp8Convert, F32IsExactWithPartialBlocks) {
  const Fp8Matrix m = make_fp8(130, 300, 128, 128, 1);  // 2 x 3 blocks, the last ones partial
  ThreadPool pool(2);
  const ConvertedMatrix out = convert_fp8_matrix(m.w(), m.s(), 128, 128, DType::F32, &pool, "f", "t");
  ASSERT_EQ(out.dtype, DType::F32);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c)
      ASSERT_EQ(reinterpret_cast<const float*>(out.row(r))[c], m.value(r, c)) << r << "," << c;
}

// Each quantized target within its rounding step, relative to the matrix's largest value.
TEST(Fp8Convert, QuantizedTargetsStayWithinTheirStep) {
  const Fp8Matrix m = make_fp8(64, 512, 128, 128, 2);
  const struct {
    DType t;
    double rel;
  } cases[] = {{DType::Q8_0, 1.0 / 127}, {DType::Q4_0, 1.0 / 8}, {DType::Q4_K, 1.0 / 7}, {DType::F16, 1.0 / 1024},
               {DType::BF16, 1.0 / 128}};
  for (const auto& c : cases) {
    const ConvertedMatrix out = convert_fp8_matrix(m.w(), m.s(), 128, 128, c.t, nullptr, "f", "t");
    ASSERT_EQ(out.dtype, c.t);
    const auto [err, amax] = fp8_error(out, m);
    EXPECT_LE(err, c.rel * amax) << dtype_name(c.t);
  }
}

TEST(Fp8Convert, RowsNotWholeBlocksFallBackToF16) {
  const Fp8Matrix m = make_fp8(8, 24, 128, 128, 3);
  const ConvertedMatrix out = convert_fp8_matrix(m.w(), m.s(), 128, 128, DType::Q8_0, nullptr, "f", "t");
  EXPECT_EQ(out.dtype, DType::F16);
  EXPECT_EQ(convert_fp8_matrix(make_fp8(8, 256 + 32, 128, 128, 4).w(), make_fp8(8, 288, 128, 128, 4).s(), 128, 128,
                               DType::Q4_K, nullptr, "f", "t")
                .dtype,
            DType::F16);
}

TEST(Fp8Convert, WrongScaleShapeOrTypeIsNamed) {
  const Fp8Matrix m = make_fp8(130, 300, 128, 128, 5);
  TensorView s = m.s();
  s.shape = {1, 3};
  try {
    convert_fp8_matrix(m.w(), s, 128, 128, DType::Q8_0, nullptr, "f", "w.weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f: tensor 'w.weight_scale_inv': expected shape [2, 3]"), std::string::npos)
        << e.what();
  }
  s = m.s();
  s.dtype = DType::I32;
  EXPECT_THROW(convert_fp8_matrix(m.w(), s, 128, 128, DType::Q8_0, nullptr, "f", "t"), Error);
  TensorView w = m.w();
  w.dtype = DType::BF16;
  EXPECT_THROW(convert_fp8_matrix(w, m.s(), 128, 128, DType::Q8_0, nullptr, "f", "t"), Error);
}

// The conversion's own Q8_0 writer gives GGML's reference quantizer's bytes
// (random values: none falls within an ulp of a rounding boundary), NaN included.
TEST(StoreFloatRow, Q8_0MatchesTheReferenceQuantizer) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(32 * 64);
  for (float& v : x) v = normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10);
  x[7] = std::nanf("");
  std::vector<uint8_t> fast(row_bytes(DType::Q8_0, 32 * 64)), ref(fast.size());
  store_float_row(DType::Q8_0, x.data(), fast.data(), 32 * 64);
  kernels::quantize_row(DType::Q8_0, x.data(), ref.data(), 32 * 64);
  EXPECT_EQ(fast, ref);
}

TEST(QuantizeQ4K, RoundTripWithinHalfAStepPlusTheScaleRounding) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> x(1024), back(1024);
  for (float& v : x) v = normal(rng);
  x[5] = 0.4f;  // one outlier
  std::vector<kernels::BlockQ4_K> q(4);
  kernels::quantize_row_q4_k(x.data(), q.data(), 1024);
  kernels::dequantize_row_data(DType::Q4_K, q.data(), back.data(), 1024);
  for (int64_t s = 0; s < 32; ++s) {  // per 32-element sub-block: within one step of its range
    float lo = 0, hi = 0;
    for (int k = 0; k < 32; ++k) {
      lo = std::min(lo, x[static_cast<size_t>(32 * s + k)]);
      hi = std::max(hi, x[static_cast<size_t>(32 * s + k)]);
    }
    const float step = (hi - lo) / 15.0f;
    for (int k = 0; k < 32; ++k) {
      const size_t i = static_cast<size_t>(32 * s + k);
      EXPECT_LE(std::fabs(back[i] - x[i]), 1.1f * step + 1e-6f) << i;
    }
  }
  EXPECT_THROW(kernels::quantize_row_q4_k(x.data(), q.data(), 100), Error);
}

TEST(CheckpointQuantConfig, ReadsEachMethod) {
  using json = nlohmann::json;
  EXPECT_EQ(read_checkpoint_quant(json::object(), "c").method, CheckpointQuantMethod::None);
  const CheckpointQuant f = read_checkpoint_quant(
      json{{"quantization_config", {{"quant_method", "fp8"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 64}}}}}, "c");
  EXPECT_EQ(f.method, CheckpointQuantMethod::Fp8);
  EXPECT_EQ(f.block_rows, 128);
  EXPECT_EQ(f.block_cols, 64);
  const CheckpointQuant a = read_checkpoint_quant(
      json{{"quantization_config", {{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"version", "GEMM"}}}},
      "c");
  EXPECT_EQ(a.method, CheckpointQuantMethod::Awq);
  EXPECT_EQ(a.group_size, 128);
  const CheckpointQuant g = read_checkpoint_quant(
      json{{"quantization_config",
            {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 64}, {"desc_act", true}, {"checkpoint_format", "gptq_v2"}}}},
      "c");
  EXPECT_TRUE(g.desc_act);
  EXPECT_FALSE(g.zero_plus_one);
  EXPECT_TRUE(read_checkpoint_quant(json{{"quantization_config", {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 32}}}},
                                    "c")
                  .zero_plus_one);
}

TEST(CheckpointQuantConfig, RefusesWhatItCannotLoad) {
  using json = nlohmann::json;
  auto refuses = [](const json& qc, const std::string& part) {
    try {
      read_checkpoint_quant(json{{"quantization_config", qc}}, "dir/config.json");
      ADD_FAILURE() << qc.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("dir/config.json"), std::string::npos) << e.what();
    }
  };
  refuses({{"quant_method", "bitsandbytes"}}, "quant_method");
  refuses({{"quant_method", "fp8"}}, "weight_block_size");
  refuses({{"quant_method", "fp8"}, {"fmt", "e3m4"}, {"weight_block_size", {128, 128}}}, "fmt");
  refuses({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 256}}, "group_size");
  refuses({{"quant_method", "awq"}, {"bits", 4}, {"group_size", 128}, {"version", "gemv"}}, "version");
  refuses({{"quant_method", "gptq"}, {"bits", 3}, {"group_size", 128}}, "bits");
  refuses({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", -1}}, "group_size");
  refuses({{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 32}, {"checkpoint_format", "marlin"}},
          "checkpoint_format");
}

}  // namespace
}  // namespace db

// Dequantization and quantization against fixtures produced by the `gguf`
// Python package (scripts/gen_quant_fixtures.py).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <ostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"
#include "util/error.h"

namespace db::kernels {
namespace {

struct Fixture {
  DType type;
  int64_t n = 0;
  std::vector<float> input;  // empty when the blocks are random bytes
  std::vector<uint8_t> blocks;
  std::vector<float> expected;
};

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

Fixture load_fixture(const std::string& name, DType type) {
  const std::string path = std::string(DB_TEST_DATA) + "/kernels/quant_" + name + ".json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing fixture " + path + " (run scripts/gen_quant_fixtures.py)");
  const auto doc = nlohmann::json::parse(in);
  Fixture f;
  f.type = type;
  f.n = doc.at("n").get<int64_t>();
  if (!doc.at("input").is_null())
    for (double v : doc.at("input")) f.input.push_back(static_cast<float>(v));
  f.blocks = from_hex(doc.at("blocks_hex").get<std::string>());
  for (double v : doc.at("expected")) f.expected.push_back(static_cast<float>(v));
  return f;
}

struct Case {
  const char* name;
  DType type;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class QuantFixture : public ::testing::TestWithParam<Case> {};

TEST_P(QuantFixture, DequantizeMatchesGguf) {
  const Fixture f = load_fixture(GetParam().name, GetParam().type);
  ASSERT_EQ(f.blocks.size(), row_bytes(f.type, f.n));
  ASSERT_EQ(static_cast<int64_t>(f.expected.size()), f.n);
  std::vector<float> out(static_cast<size_t>(f.n));
  dequantize_row_data(f.type, f.blocks.data(), out.data(), f.n);
  for (int64_t i = 0; i < f.n; ++i) {
    const float want = f.expected[static_cast<size_t>(i)];
    // Same float operations in the same order; the slack only covers FMA contraction.
    ASSERT_NEAR(out[static_cast<size_t>(i)], want, std::fabs(want) * 1e-6f) << "element " << i;
  }
}

TEST_P(QuantFixture, DequantizeRowOfATensorView) {
  const Fixture f = load_fixture(GetParam().name, GetParam().type);
  const int64_t bs = block_size(f.type) == 1 ? 32 : block_size(f.type);
  TensorView w;
  w.dtype = f.type;
  w.shape = {f.n / bs, bs};
  w.data = f.blocks.data();
  std::vector<float> out(static_cast<size_t>(bs));
  const int64_t r = w.rows() - 1;
  dequantize_row(w, r, out.data());
  for (int64_t i = 0; i < bs; ++i)
    ASSERT_NEAR(out[static_cast<size_t>(i)], f.expected[static_cast<size_t>(r * bs + i)],
                std::fabs(f.expected[static_cast<size_t>(r * bs + i)]) * 1e-6f);
  EXPECT_THROW(dequantize_row(w, w.rows(), out.data()), Error);
  EXPECT_THROW(dequantize_row(w, -1, out.data()), Error);
}

TEST_P(QuantFixture, QuantizeMatchesGgufBytes) {
  const Fixture f = load_fixture(GetParam().name, GetParam().type);
  if (f.input.empty()) GTEST_SKIP() << GetParam().name << " has no quantizer (fixture holds random blocks)";
  ASSERT_TRUE(can_quantize(f.type));
  std::vector<uint8_t> out(row_bytes(f.type, f.n));
  quantize_row(f.type, f.input.data(), out.data(), f.n);
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], f.blocks[i]) << "byte " << i;
}

INSTANTIATE_TEST_SUITE_P(Types, QuantFixture,
                         ::testing::Values(Case{"Q4_0", DType::Q4_0}, Case{"Q4_1", DType::Q4_1},
                                           Case{"Q5_0", DType::Q5_0}, Case{"Q5_1", DType::Q5_1},
                                           Case{"Q8_0", DType::Q8_0}, Case{"Q4_K", DType::Q4_K},
                                           Case{"Q5_K", DType::Q5_K}, Case{"Q6_K", DType::Q6_K},
                                           Case{"F16", DType::F16}, Case{"BF16", DType::BF16}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Quantize, RejectsUnsupportedTypesAndLengths) {
  std::vector<float> x(64, 1.0f);
  std::vector<uint8_t> out(1024);
  EXPECT_THROW(quantize_row(DType::Q4_K, x.data(), out.data(), 256), Error);
  EXPECT_THROW(quantize_row(DType::Q8_0, x.data(), out.data(), 48), Error);
  EXPECT_THROW(dequantize_row_data(DType::Q2_K, out.data(), x.data(), 256), Error);
  EXPECT_THROW(dequantize_row_data(DType::Q4_0, out.data(), x.data(), 40), Error);
}

TEST(Quantize, F32RowIsACopy) {
  const std::vector<float> x = {1.5f, -2.0f, 0.0f};
  std::vector<float> out(3);
  quantize_row(DType::F32, x.data(), out.data(), 3);
  EXPECT_EQ(out, x);
}

}  // namespace
}  // namespace db::kernels

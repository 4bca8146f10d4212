#include "test_weights.h"

#include <random>

#include "kernels/dequantize.h"
#include "kernels/quantize.h"
#include "util/fp16.h"

namespace db::kernels::testing {

TensorView TestWeights::view() const {
  TensorView v;
  v.dtype = dtype;
  v.shape = {rows, cols};
  v.data = bytes.data();
  return v;
}

namespace {

void put_fp16(uint8_t* p, float v) {
  const uint16_t h = f32_to_fp16(v);
  p[0] = static_cast<uint8_t>(h & 0xFF);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// Random bytes with the fp16 scale fields (d, and dmin for Q4_K / Q5_K) set to sane values.
void random_k_blocks(DType t, std::vector<uint8_t>& bytes, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.002f, 0.05f), min_scale(0.001f, 0.03f);
  for (auto& b : bytes) b = static_cast<uint8_t>(byte(rng));
  const size_t bb = block_bytes(t);
  for (size_t off = 0; off < bytes.size(); off += bb) {
    if (t == DType::Q6_K) {
      put_fp16(&bytes[off + bb - 2], scale(rng));
    } else {
      put_fp16(&bytes[off], scale(rng));
      put_fp16(&bytes[off + 2], min_scale(rng));
    }
  }
}

}  // namespace

TestWeights make_weights(DType dtype, int64_t rows, int64_t cols, uint32_t seed) {
  TestWeights w;
  w.dtype = dtype;
  w.rows = rows;
  w.cols = cols;
  const size_t rb = row_bytes(dtype, cols);
  w.bytes.assign(rb * static_cast<size_t>(rows), 0);
  std::mt19937 rng(seed);
  if (dtype == DType::Q4_K || dtype == DType::Q5_K || dtype == DType::Q6_K) {
    random_k_blocks(dtype, w.bytes, rng);
  } else {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      const float row_scale = 0.02f * static_cast<float>(1 + r % 5);
      for (auto& v : row) v = normal(rng) * row_scale;
      quantize_row(dtype, row.data(), w.bytes.data() + static_cast<size_t>(r) * rb, cols);
    }
  }
  w.values.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    dequantize_row_data(dtype, w.bytes.data() + static_cast<size_t>(r) * rb, w.values.data() + r * cols, cols);
  return w;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

std::vector<float> make_activations(int64_t n_tokens, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols));
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float s = 0.5f + static_cast<float>(t % 4);
    for (int64_t i = 0; i < cols; ++i) x[static_cast<size_t>(t * cols + i)] = normal(rng) * s;
  }
  return x;
}

}  // namespace db::kernels::testing

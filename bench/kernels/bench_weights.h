// Random weight matrices for the matmul benchmarks, in GGUF (Rows) layout.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quantize.h"
#include "tensor/tensor.h"

namespace db::bench {

// rows x cols weights of dtype t: quantized from N(0, 0.02) where the project
// quantizes t; K-quants: random blocks with a small fp16 scale in the d fields.
inline std::vector<uint8_t> random_weights(DType t, int64_t rows, int64_t cols) {
  std::mt19937 rng(42);
  const size_t rb = row_bytes(t, cols);
  std::vector<uint8_t> bytes(rb * static_cast<size_t>(rows));
  if (kernels::can_quantize(t)) {
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& v : row) v = normal(rng);
      kernels::quantize_row(t, row.data(), bytes.data() + static_cast<size_t>(r) * rb, cols);
    }
  } else {  // K-quants: random blocks with a small fp16 scale (0x2000 ~ 0.0078) in the d fields
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : bytes) b = static_cast<uint8_t>(byte(rng));
    const size_t bb = block_bytes(t);
    for (size_t off = 0; off < bytes.size(); off += bb) {
      const size_t d = t == DType::Q6_K ? off + bb - 2 : off;
      bytes[d] = 0x00;
      bytes[d + 1] = 0x20;
    }
  }
  return bytes;
}

// A view of `bytes` as a rows x cols matrix of dtype t.
inline TensorView weight_view(const std::vector<uint8_t>& bytes, DType t, int64_t rows, int64_t cols) {
  TensorView w;
  w.dtype = t;
  w.shape = {rows, cols};
  w.data = bytes.data();
  return w;
}

}  // namespace db::bench

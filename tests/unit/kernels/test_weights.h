// Deterministic weight matrices in every supported dtype, with their exact
// dequantized values, and random inputs, for the kernel tests.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace db::kernels::testing {

struct TestWeights {
  DType dtype = DType::F32;
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> bytes;  // rows * row_bytes(dtype, cols), GGML layout
  std::vector<float> values;   // rows * cols dequantized values (what the bytes mean)
  TensorView view() const;
};

// Random weights: quantized from Gaussian floats where a quantizer exists,
// random valid blocks (sane fp16 super-block scales) for K-quants.
TestWeights make_weights(DType dtype, int64_t rows, int64_t cols, uint32_t seed);

// n Gaussian floats of standard deviation `scale`.
std::vector<float> random_floats(size_t n, uint32_t seed, float scale);

// n_tokens rows of Gaussian activations whose scale varies per token.
std::vector<float> make_activations(int64_t n_tokens, int64_t cols, uint32_t seed);

}  // namespace db::kernels::testing

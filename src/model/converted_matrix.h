// A weight matrix converted at load from a checkpoint's storage form (FP8
// blocks, AWQ / GPTQ int4) into a type the kernels compute with, and the row
// writer both conversions share.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"
#include "util/huge_buffer.h"

namespace db {

struct ConvertedMatrix {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // {rows, cols}
  HugeBuffer data;             // rows * row_bytes(dtype, cols) bytes, Rows layout

  // Allocates the bytes of a {rows, cols} matrix of type t.
  ConvertedMatrix(DType t, int64_t rows, int64_t cols);
  TensorView view() const;
  uint8_t* row(int64_t r) const { return data.data() + static_cast<size_t>(r) * row_bytes(dtype, shape[1]); }
};

// The type a row of `cols` elements is stored in when `want` is asked for: want
// when cols is a whole number of its blocks, else F16 (as `deepbatch convert`
// falls back): F16 keeps an FP8 value times its block scale to 11 significant
// bits, more than any quantized type would.
DType converted_row_type(DType want, int64_t cols);

// Writes n floats as row_bytes(t, n) bytes of type t: F32, F16, BF16, Q4_0,
// Q4_1, Q5_0, Q5_1 (GGML's reference quantizers), Q8_0 (the same rule, see
// converted_matrix.cpp) or Q4_K (kernels/quantize_k.h). Throws db::Error for
// another type.
void store_float_row(DType t, const float* x, uint8_t* dst, int64_t n);

}  // namespace db

#include "model/converted_matrix.h"

#include "kernels/quantize.h"
#include "kernels/quantize_k.h"

namespace db {

ConvertedMatrix::ConvertedMatrix(DType t, int64_t rows, int64_t cols)
    : dtype(t), shape{rows, cols}, data(static_cast<size_t>(rows) * row_bytes(t, cols)) {}

TensorView ConvertedMatrix::view() const { return TensorView{dtype, shape, data.data()}; }

DType converted_row_type(DType want, int64_t cols) {
  return cols % block_size(want) == 0 ? want : DType::F16;
}

void store_float_row(DType t, const float* x, uint8_t* dst, int64_t n) {
  if (t == DType::Q4_K) {
    kernels::quantize_row_q4_k(x, reinterpret_cast<kernels::BlockQ4_K*>(dst), n);
    return;
  }
  kernels::quantize_row(t, x, dst, n);
}

}  // namespace db

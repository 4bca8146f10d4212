// Stored-format -> float row conversion (scalar reference implementation).
#pragma once
#include <cstdint>

#include "tensor/dtype.h"

namespace db::kernels {

// Converts n elements (a multiple of block_size(t)) stored at src in format t
// into floats. Supports F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
// Q6_K; throws db::Error for any other type or a bad n.
void dequantize_row_data(DType t, const void* src, float* dst, int64_t n);

// True for the types dequantize_row_data (and matmul) accept.
bool can_dequantize(DType t);

}  // namespace db::kernels

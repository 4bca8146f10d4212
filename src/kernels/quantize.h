// Float -> stored-format row conversion for model weights (tools and tests).
// The quantized formats follow GGML's reference quantizers bit for bit.
#pragma once
#include <cstdint>

#include "kernels/quant_blocks.h"
#include "tensor/dtype.h"

namespace db::kernels {

// n must be a multiple of 32; y receives n / 32 blocks.
void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n);
void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n);
void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n);
void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n);
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n);

// Converts n floats to row_bytes(t, n) bytes at dst. Supports F32, F16, BF16,
// Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0; throws db::Error for any other type or a bad n.
void quantize_row(DType t, const float* src, void* dst, int64_t n);

// True for the types quantize_row accepts.
bool can_quantize(DType t);

}  // namespace db::kernels

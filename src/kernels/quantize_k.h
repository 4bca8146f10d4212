// Float -> Q4_K row quantization (the weights of FP8 checkpoints converted with
// --quantize Q4_K). A plain min/max quantizer: per 32-element sub-block a scale
// (max - min) / 15 and an offset min (clamped to <= 0, as Q4_K stores only
// non-negative mins), both rounded to 6 bits against the super-block's largest,
// then every code rounded to nearest with the stored (rounded) scale and min.
// Unlike GGML's quantizer it does not search for better scales, so its error is
// somewhat larger; dequantize_row_data reads the result like any Q4_K block.
#pragma once
#include <cstdint>

#include "kernels/quant_blocks.h"

namespace db::kernels {

// n must be a multiple of 256 (throws db::Error otherwise); y receives n / 256 blocks.
void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t n);

}  // namespace db::kernels

// The matmul driver's activation quantization: a step's float token rows
// quantized once per format (Q8x32 or Q8x256) into the layout the kernels read
// (kernels/cpu/act_quant.h), in per-thread scratch that the next call of the
// same thread, format and layout reuses.
#pragma once
#include <cstdint>

#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/gemm_tile.h"
#include "util/thread_pool.h"

namespace db::kernels {

// Quantizes X ([n_tokens][cols] floats, cols a multiple of `block`) with the
// level's quantizer k. block: 32 or 256. The result points into the calling
// thread's scratch for (block, layout): valid until that thread's next call
// with the same pair.
QuantizedActs quantize_acts(const GemmKernels& k, int block, ActLayout layout, const float* X, int64_t n_tokens,
                            int64_t cols, ThreadPool& pool);

}  // namespace db::kernels

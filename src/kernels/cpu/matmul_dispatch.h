// ISA-level access to the CPU matmul, for tests and A/B measurements. Normal
// callers use kernels/matmul.h, which runs at cpu_features().level.
#pragma once
#include <cstdint>

#include "kernels/cpu/gemm_tile.h"
#include "tensor/tensor.h"
#include "util/cpu_features.h"
#include "util/thread_pool.h"

namespace db::kernels {

// The kernel table of `level`; only for levels this CPU supports (building a
// table runs code of its level).
const GemmKernels& gemm_kernels(IsaLevel level);

// matmul() (kernels/matmul.h) with the kernels of `level`; throws db::Error if
// this CPU cannot run that level.
void matmul_isa(IsaLevel level, const TensorView& W, const float* X, int64_t n_tokens, float* Y, ThreadPool& pool);

}  // namespace db::kernels

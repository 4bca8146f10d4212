// Weight matrices on the device in their file's block layout, multiplied by kernels
// that dequantize in the kernel (README.md).
#pragma once
#include <cstdint>

#include "kernels/cuda/runtime.h"
#include "tensor/dtype.h"

namespace db::kernels::cuda {

// n_groups matrices of `rows` rows by `cols` inputs (routed experts stacked; 1 for a
// dense matrix), each row row_bytes(dtype, cols) bytes exactly as the GGUF file stores
// it (kernels/quant_blocks.h), group g's rows after group g-1's.
struct DeviceMatrix {
  DeviceBuffer data;
  DType dtype = DType::F32;
  int64_t rows = 0, cols = 0;
  int n_groups = 1;
  size_t row_bytes = 0;
};

// The types matmul reads: F32 (cols a multiple of 32), F16, BF16, Q8_0, Q4_0 (cols a multiple of 32), Q4_K, Q6_K (of 256).
bool matmul_supports(DType t);

// Copies n_groups * rows rows from host memory, once; throws db::Error for an
// unsupported type or a cols the type's blocks do not divide.
DeviceMatrix upload_matrix(DType t, const void* host, int64_t rows, int64_t cols, int n_groups = 1);

// y[t][r] = sum_c W[r][c] * x[t][c] for t < n_tokens, with group 0 of w. x is
// [n_tokens][cols] and y [n_tokens][rows], f32 device arrays. Each weight is
// dequantized in the kernel and multiplied in f32 with the f32 activation, sums in
// f32. One token runs the GEMV form (a warp per row); more run the token-tiled GEMM
// form, which reads each weight block once per tile of 8 tokens.
void matmul(const DeviceMatrix& w, const float* x, int64_t n_tokens, float* y, Stream& stream);

// The MoE grouped GEMM over one step's tokens: entry e, for e in [group_start[g],
// group_start[g + 1]), is token token_of[e] routed to expert g, and
// out[e][r] = sum_c W_g[r][c] * x[token_of[e]][c]. group_start (n_groups + 1
// ascending offsets, the last n_entries) and token_of (n_entries) are device int32
// arrays; out is [n_entries][rows]. The caller weights and sums the experts' rows.
void grouped_matmul(const DeviceMatrix& w, const float* x, const int32_t* group_start, const int32_t* token_of,
                    int64_t n_entries, float* out, Stream& stream);

}  // namespace db::kernels::cuda

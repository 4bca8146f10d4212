// The row operations of the compute backend's contract (backend/compute_backend.h) on
// device f32 arrays: copies, gathers and scatters of rows, residual adds, biases,
// embedding rows, RoPE by a step's factor tables, and the KV cache write. Index and
// weight arrays (rows, ids, slots) are device arrays here; the backend uploads them.
// Every element is computed by one thread from its own inputs, so a row's result does
// not depend on the other rows of the call.
#pragma once
#include <cstdint>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/runtime.h"
#include "tensor/dtype.h"

namespace db::kernels::cuda {

// dst row r (ld_dst apart) = the first `width` floats of src row r (ld_src apart).
void copy_rows(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows, int64_t width,
               Stream& stream);
// dst row i (width floats) = src row rows[i], i < n.
void gather_rows(const float* src, int64_t width, const int32_t* rows, int64_t n, float* dst, Stream& stream);
void fill_zero(float* x, int64_t n, Stream& stream);
// x[i] += delta[i], i < count.
void add_rows(float* x, const float* delta, int64_t count, Stream& stream);
// x row t (ld apart) += bias (width floats), t < n.
void add_bias(float* x, int64_t ld, const float* bias, int64_t width, int64_t n, Stream& stream);
// dst row rows[i] += weights[i] * y row i (width floats), i < n; the rows are distinct.
void add_weighted_rows(const float* y, int64_t width, const int32_t* rows, const float* weights, int64_t n,
                       float* dst, Stream& stream);
// out row t (ld_out apart) = row ids[t] of table (group 0), dequantized as matmul reads it.
void embed_rows(const DeviceMatrix& table, const int32_t* ids, int64_t n, float* out, int64_t ld_out,
                Stream& stream);
// Rotates n_heads heads (head_dim apart) of each of n token rows (ld apart) over their
// first 2 * n_pairs floats by that row's factors cos / sin [n][n_pairs], as
// kernels::rope_rotate does.
void rope_rotate_rows(float* x, int64_t ld, int n_heads, int head_dim, int64_t n, int n_pairs, RopeStyle style,
                      const float* cos, const float* sin, Stream& stream);
// Token i's row_elems floats (src_stride apart) into slot slots[i] of a KV array of
// rows row_stride elements apart, stored as dtype (F32, F16, BF16, or Q8_0 blocks of
// 32 from the row's start, each quantized from its own values).
void write_kv_rows(const float* src, int64_t src_stride, int64_t n, const int64_t* slots, void* dst, DType dtype,
                   int64_t row_elems, int64_t row_stride, Stream& stream);

}  // namespace db::kernels::cuda

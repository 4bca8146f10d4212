// Matrix products between model weights (any supported dtype, kept in their
// stored format) and float32 activations. The implementation picks the best
// ISA available at start-up (see util/cpu_features.h; DB_ISA lowers it).
#pragma once
#include <cstdint>

#include "tensor/tensor.h"
#include "util/thread_pool.h"

namespace db::kernels {

// Y[t, o] = sum_i W[o, i] * X[t, i] for t < n_tokens, o < W.rows().
// W: {out, in} weight (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K);
// X: n_tokens rows of in = W.cols() floats, contiguous; Y: n_tokens rows of out floats.
// Each weight block is read once per call for all tokens (tiled over tokens).
void matmul(const TensorView& W, const float* X, int64_t n_tokens, float* Y, ThreadPool& pool);

// One product of a group that shares its input rows: Y = X * W^T as in matmul().
struct MatmulTask {
  const TensorView* w;  // weight {out, in}; every task of a group has the same `in`
  float* y;             // n_tokens rows of w->rows() floats, ldy floats apart
  int64_t ldy = 0;      // 0: w->rows() (contiguous rows)
};

// Runs every task of the group in one parallel region, quantizing the shared
// activations once per block format. Each output equals matmul()'s bit for bit.
void matmul_group(const MatmulTask* tasks, int n_tasks, const float* X, int64_t n_tokens, ThreadPool& pool);

// Products that each read their own columns of the same token rows (e.g. one
// small product per attention head), run in one parallel region with each
// task's activations quantized once, straight from X (no copy): task i
// computes Y_i = X_i * W_i^T for n_tokens tokens, where token t's row of X_i is
// the w->cols() floats at X + t * ldx + i * head_stride. Every task's weight
// has the same `in` and dtype. Each output equals matmul()'s on X_i's rows
// copied out, bit for bit.
void matmul_heads(const MatmulTask* tasks, int n_tasks, const float* X, int64_t ldx, int64_t head_stride,
                  int64_t n_tokens, ThreadPool& pool);

// The feed-forward gate: out[t, o] = silu(gate . x_t) * (up . x_t), with the two
// products computed and combined row range by row range in one parallel region
// (bit for bit the same as two matmul() calls followed by swiglu()).
// gate and up have the same shape; up_scratch holds n_tokens * rows floats.
void matmul_swiglu(const TensorView& gate, const TensorView& up, const float* X, int64_t n_tokens, float* out,
                   float* up_scratch, ThreadPool& pool);

// Dequantizes row r of W (W.cols() elements) into dst; used for embedding lookups.
void dequantize_row(const TensorView& W, int64_t r, float* dst);

}  // namespace db::kernels

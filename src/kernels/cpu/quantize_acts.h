// The matmul driver's activation preparation: a step's float token rows
// quantized once per format (Q8x32 or Q8x256) into the layout the kernels read
// (kernels/cpu/act_quant.h), or regrouped for the float panel kernels, in
// per-thread scratch that the next call of the same thread and form reuses.
#pragma once
#include <cstdint>

#include "kernels/cpu/act_quant.h"
#include "kernels/cpu/gemm_tile.h"
#include "util/thread_pool.h"

namespace db::kernels {

// Where the rows of X lie, and which are tokens: all rows, row t at
// X + t * cols (period 0); or inputs of several products side by side in the
// same token rows (kernels/matmul.h matmul_heads): row r is token r % period
// of input r / period, at X + (r % period) * ld + (r / period) * input_stride,
// and a token only when r % period < used (the rest pad each input to whole
// tiles; they are never read, and their quantized slots are left unwritten).
struct TokenRows {
  int64_t period = 0;
  int64_t used = 0;
  int64_t ld = 0;
  int64_t input_stride = 0;

  bool holds(int64_t t) const { return period == 0 || t % period < used; }
  const float* row(const float* X, int64_t t, int64_t cols) const {
    return period == 0 ? X + t * cols : X + (t % period) * ld + (t / period) * input_stride;
  }
};

// Quantizes the n_tokens rows of X (cols floats each, laid out as `rows`
// says; cols a multiple of `block`) with the level's quantizer k. block: 32
// or 256. The result points into the calling thread's scratch for (block,
// layout): valid until that thread's next call with the same pair.
QuantizedActs quantize_acts(const GemmKernels& k, int block, ActLayout layout, const float* X, int64_t n_tokens,
                            int64_t cols, ThreadPool& pool, TokenRows rows = {});

// The n_tokens rows of X (laid out as `rows` says) regrouped for the float
// panel kernels: tokens in tiles of kActTileTokens, element k of tile T's
// token l at ((T * cols) + k) * kActTileTokens + l (the padding tokens of the
// last tile unwritten). The result points into the calling thread's scratch: valid
// until its next call.
const float* tile_float_acts(const float* X, int64_t n_tokens, int64_t cols, ThreadPool& pool, TokenRows rows = {});

// The n_tokens rows of X (laid out as `rows` says) copied into contiguous rows
// of `cols` floats, row t at t * cols (padding rows unwritten), for the float
// kernels of the Rows layout. In the calling thread's scratch: valid until its
// next call.
const float* gather_float_rows(const float* X, int64_t n_tokens, int64_t cols, ThreadPool& pool, TokenRows rows);

}  // namespace db::kernels

// The CPU matmul driver: validates the operands, quantizes the activations when
// the weights are quantized, and walks (row tile x token tile) kernels over the
// thread pool. Threads split the rows; inside a thread each tile of weight rows
// stays in L1 while every token tile of the current token chunk passes over it.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "util/error.h"

namespace db::kernels {

namespace {

// Activation bytes per token chunk: the chunk is re-read for every row tile, so keep it in L2.
constexpr int64_t kActChunkBytes = 256 * 1024;

GemmTileFn kernel_for(const GemmKernels& k, DType t) {
  switch (t) {
    case DType::F32: return k.f32;
    case DType::F16: return k.f16;
    case DType::BF16: return k.bf16;
    case DType::Q4_0: return k.q4_0;
    case DType::Q4_1: return k.q4_1;
    case DType::Q8_0: return k.q8_0;
    case DType::Q4_K: return k.q4_k;
    case DType::Q5_K: return k.q5_k;
    case DType::Q6_K: return k.q6_k;
    default: return nullptr;
  }
}

// Reusable, 64-byte aligned scratch for the quantized activations of the calling thread.
uint8_t* scratch(size_t bytes) {
  thread_local std::vector<uint8_t> buf;
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  const auto addr = reinterpret_cast<uintptr_t>(buf.data());
  return buf.data() + ((64 - addr % 64) % 64);
}

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

QuantizedActs quantize_acts(const GemmKernels& k, int block, const float* X, int64_t n_tokens, int64_t cols,
                            ThreadPool& pool) {
  QuantizedActs a{};
  a.n_tokens = n_tokens;
  a.cols = cols;
  a.block = block;
  a.nblocks = cols / block;
  a.qs_stride = static_cast<int64_t>(align64(static_cast<size_t>(cols)));
  const size_t qs_bytes = static_cast<size_t>(n_tokens * a.qs_stride);
  const size_t d_bytes = align64(static_cast<size_t>(n_tokens * a.nblocks) * sizeof(float));
  const size_t extra_bytes = block == 32 ? d_bytes : align64(static_cast<size_t>(n_tokens * a.nblocks * 16) * 2);
  uint8_t* base = scratch(qs_bytes + d_bytes + extra_bytes);
  a.qs = reinterpret_cast<int8_t*>(base);
  a.d = reinterpret_cast<float*>(base + qs_bytes);
  if (block == 32)
    a.ds = reinterpret_cast<float*>(base + qs_bytes + d_bytes);
  else
    a.bsums = reinterpret_cast<int16_t*>(base + qs_bytes + d_bytes);
  pool.parallel_for(n_tokens, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const float* x = X + t * cols;
      int8_t* qs = a.qs + t * a.qs_stride;
      float* d = a.d + t * a.nblocks;
      if (block == 32)
        k.quantize_q8x32(x, cols, qs, d, a.ds + t * a.nblocks);
      else
        k.quantize_q8x256(x, cols, qs, d, a.bsums + t * a.nblocks * 16);
    }
  });
  return a;
}

// Runs the tiles of rows [row_tile_begin, row_tile_end) * tile_rows over all tokens.
void run_tiles(const GemmKernels& k, GemmTileFn fn, GemmTile base, int64_t rows, int64_t n_tokens,
               int64_t chunk_tokens, int64_t row_tile_begin, int64_t row_tile_end) {
  const uint8_t* w0 = base.w;
  float* y0 = base.y;
  for (int64_t tc = 0; tc < n_tokens; tc += chunk_tokens) {
    const int64_t tc_end = std::min(n_tokens, tc + chunk_tokens);
    for (int64_t rt = row_tile_begin; rt < row_tile_end; ++rt) {
      const int64_t r0 = rt * k.tile_rows;
      GemmTile tile = base;
      tile.w = w0 + r0 * base.w_stride;
      tile.nr = static_cast<int>(std::min<int64_t>(k.tile_rows, rows - r0));
      for (int64_t t0 = tc; t0 < tc_end; t0 += k.tile_tokens) {
        tile.t0 = t0;
        tile.nt = static_cast<int>(std::min<int64_t>(k.tile_tokens, tc_end - t0));
        tile.y = y0 + t0 * base.ldy + r0;
        fn(tile);
      }
    }
  }
}

void check_operands(const TensorView& W, const float* X, int64_t n_tokens, const float* Y) {
  if (!can_dequantize(W.dtype))
    throw Error("matmul: weight dtype " + dtype_name(W.dtype) + " (shape " + W.shape_str() +
                ") is not supported; supported: F32, F16, BF16, Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K");
  if (W.shape.size() < 2) throw Error("matmul: weight must be a matrix, got shape " + W.shape_str());
  if (W.cols() % block_size(W.dtype) != 0)
    throw Error("matmul: weight row length " + std::to_string(W.cols()) + " is not a multiple of the " +
                dtype_name(W.dtype) + " block size " + std::to_string(block_size(W.dtype)));
  if (n_tokens < 0) throw Error("matmul: negative token count " + std::to_string(n_tokens));
  if (n_tokens > 0 && W.rows() > 0 && (W.data == nullptr || X == nullptr || Y == nullptr))
    throw Error("matmul: null weight, input or output pointer (weight shape " + W.shape_str() + ")");
}

}  // namespace

void matmul_isa(IsaLevel level, const TensorView& W, const float* X, int64_t n_tokens, float* Y, ThreadPool& pool) {
  if (!isa_supported(level))
    throw Error(std::string("matmul: ISA level ") + isa_name(level) + " is not supported by this CPU");
  check_operands(W, X, n_tokens, Y);
  const int64_t rows = W.rows(), cols = W.cols();
  if (n_tokens == 0 || rows == 0) return;
  if (cols == 0) {
    std::fill(Y, Y + n_tokens * rows, 0.0f);
    return;
  }
  const GemmKernels& k = gemm_kernels(level);
  const GemmTileFn fn = kernel_for(k, W.dtype);
  DB_CHECK(fn != nullptr, "no " + dtype_name(W.dtype) + " kernel at level " + isa_name(level));

  GemmTile base{};
  base.w = static_cast<const uint8_t*>(W.data);
  base.w_stride = static_cast<int64_t>(W.row_nbytes());
  base.cols = cols;
  base.y = Y;
  base.ldy = rows;
  QuantizedActs acts{};
  int64_t act_row_bytes = cols * static_cast<int64_t>(sizeof(float));
  if (is_quantized(W.dtype)) {
    const int block = block_size(W.dtype) == 256 ? 256 : 32;
    acts = quantize_acts(k, block, X, n_tokens, cols, pool);
    base.acts = &acts;
    act_row_bytes = acts.qs_stride;
  } else {
    base.x = X;
  }
  int64_t chunk = std::max<int64_t>(1, kActChunkBytes / act_row_bytes / k.tile_tokens) * k.tile_tokens;
  const int64_t row_tiles = (rows + k.tile_rows - 1) / k.tile_rows;
  pool.run([&](int tid, int nth) {
    const int64_t begin = row_tiles * tid / nth, end = row_tiles * (tid + 1) / nth;
    if (begin < end) run_tiles(k, fn, base, rows, n_tokens, chunk, begin, end);
  });
}

void matmul(const TensorView& W, const float* X, int64_t n_tokens, float* Y, ThreadPool& pool) {
  matmul_isa(cpu_features().level, W, X, n_tokens, Y, pool);
}

}  // namespace db::kernels

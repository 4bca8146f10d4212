#include "kernels/cuda/matmul.h"

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/block_decode.h"

namespace db::kernels::cuda {

namespace {

constexpr int kWarpsPerBlock = 4;  // one output row per warp
constexpr int kTokenTile = 8;      // tokens per pass of the GEMM form

// Grid (row blocks, groups); warp w of a block computes output row r for the entries
// of its group, kTile entries per pass. The warp walks the row's 32-weight units in
// order, lane i decoding weight i of the unit (one block's bytes for all lanes) and
// multiplying it with element 32u + i of each entry's activations (128 contiguous
// bytes per entry); each lane's sums are then added across the warp.
template <DType T, int kTile>
__global__ void matmul_kernel(const uint8_t* w, int64_t rows, int64_t cols, size_t row_bytes, const float* x,
                              const int32_t* group_start, const int32_t* token_of, int64_t n_entries, float* out) {
  const int lane = threadIdx.x % 32;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (r >= rows) return;
  const int g = blockIdx.y;
  const int64_t e_begin = group_start ? group_start[g] : 0, e_end = group_start ? group_start[g + 1] : n_entries;
  const uint8_t* row = w + (static_cast<int64_t>(g) * rows + r) * row_bytes;
  const int64_t units = cols / 32;
  for (int64_t e0 = e_begin; e0 < e_end; e0 += kTile) {
    const int n = static_cast<int>(e_end - e0 < kTile ? e_end - e0 : kTile);
    const float* xr[kTile];
    float acc[kTile];
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      const int64_t token = t < n ? (token_of ? token_of[e0 + t] : e0 + t) : 0;
      xr[t] = x + token * cols + lane;
      acc[t] = 0.0f;
    }
#pragma unroll 4
    for (int64_t u = 0; u < units; ++u) {
      const float wv = load_weight<T>(row, u, lane);
#pragma unroll
      for (int t = 0; t < kTile; ++t)
        if (t < n) acc[t] += wv * xr[t][u * 32];
    }
#pragma unroll
    for (int t = 0; t < kTile; ++t) {
      const float total = warp_sum(acc[t]);
      if (lane == 0 && t < n) out[(e0 + t) * rows + r] = total;
    }
  }
}

template <int kTile>
void launch(const DeviceMatrix& w, const float* x, const int32_t* group_start, const int32_t* token_of,
            int64_t n_entries, int n_groups, float* out, Stream& stream) {
  const dim3 grid(blocks_for(w.rows, kWarpsPerBlock), static_cast<unsigned>(n_groups));
  const dim3 block(32 * kWarpsPerBlock);
  cudaStream_t s = stream_of(stream.handle());
  const auto* data = w.data.as<uint8_t>();
#define DB_CUDA_MATMUL_CASE(T)                                                                              \
  case T:                                                                                                   \
    matmul_kernel<T, kTile><<<grid, block, 0, s>>>(data, w.rows, w.cols, w.row_bytes, x, group_start, token_of, \
                                                   n_entries, out);                                         \
    break;
  switch (w.dtype) {
    DB_CUDA_MATMUL_CASE(DType::F32)
    DB_CUDA_MATMUL_CASE(DType::F16)
    DB_CUDA_MATMUL_CASE(DType::BF16)
    DB_CUDA_MATMUL_CASE(DType::Q8_0)
    DB_CUDA_MATMUL_CASE(DType::Q4_0)
    DB_CUDA_MATMUL_CASE(DType::Q4_K)
    DB_CUDA_MATMUL_CASE(DType::Q6_K)
    default:
      throw Error("CUDA matmul: unsupported weight type " + dtype_name(w.dtype));
  }
#undef DB_CUDA_MATMUL_CASE
  check_launch("matmul_kernel");
}

}  // namespace

bool matmul_supports(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::Q8_0 || t == DType::Q4_0 || t == DType::Q4_K ||
         t == DType::Q6_K;
}

DeviceMatrix upload_matrix(DType t, const void* host, int64_t rows, int64_t cols, int n_groups) {
  if (!matmul_supports(t)) throw Error("CUDA matmul: unsupported weight type " + dtype_name(t));
  const int64_t unit = t == DType::Q4_K || t == DType::Q6_K ? 256 : 32;
  if (rows <= 0 || cols <= 0 || cols % unit != 0 || n_groups <= 0)
    throw Error("CUDA matmul: a " + dtype_name(t) + " matrix needs rows > 0 and cols a multiple of " +
                std::to_string(unit) + ", got " + std::to_string(rows) + " x " + std::to_string(cols));
  DeviceMatrix m;
  m.dtype = t;
  m.rows = rows;
  m.cols = cols;
  m.n_groups = n_groups;
  m.row_bytes = row_bytes(t, cols);
  const size_t total = m.row_bytes * static_cast<size_t>(rows) * static_cast<size_t>(n_groups);
  m.data = DeviceBuffer(total);
  m.data.upload(host, total);
  return m;
}

void matmul(const DeviceMatrix& w, const float* x, int64_t n_tokens, float* y, Stream& stream) {
  if (n_tokens <= 0) return;
  if (n_tokens == 1)
    launch<1>(w, x, nullptr, nullptr, n_tokens, 1, y, stream);
  else
    launch<kTokenTile>(w, x, nullptr, nullptr, n_tokens, 1, y, stream);
}

void grouped_matmul(const DeviceMatrix& w, const float* x, const int32_t* group_start, const int32_t* token_of,
                    int64_t n_entries, float* out, Stream& stream) {
  if (n_entries <= 0) return;
  launch<kTokenTile>(w, x, group_start, token_of, n_entries, w.n_groups, out, stream);
}

}  // namespace db::kernels::cuda

#include "kernels/cuda/rows.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/check.cuh"
#include "tensor/kv_row_bytes.h"

namespace db::kernels::cuda {

namespace {

constexpr int kThreads = 256;

__device__ inline int64_t thread_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

__global__ void copy_rows_kernel(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t count,
                                 int64_t width) {
  const int64_t i = thread_index();
  if (i >= count) return;
  const int64_t r = i / width, c = i % width;
  dst[r * ld_dst + c] = src[r * ld_src + c];
}

__global__ void gather_rows_kernel(const float* src, int64_t width, const int32_t* rows, int64_t count, float* dst) {
  const int64_t i = thread_index();
  if (i >= count) return;
  dst[i] = src[static_cast<int64_t>(rows[i / width]) * width + i % width];
}

__global__ void add_kernel(float* x, const float* delta, int64_t count) {
  const int64_t i = thread_index();
  if (i < count) x[i] += delta[i];
}

__global__ void add_bias_kernel(float* x, int64_t ld, const float* bias, int64_t width, int64_t count) {
  const int64_t i = thread_index();
  if (i < count) x[(i / width) * ld + i % width] += bias[i % width];
}

__global__ void add_weighted_rows_kernel(const float* y, int64_t width, const int32_t* rows, const float* weights,
                                         int64_t count, float* dst) {
  const int64_t i = thread_index();
  if (i >= count) return;
  const int64_t r = i / width;
  dst[static_cast<int64_t>(rows[r]) * width + i % width] += weights[r] * y[i];
}

// One thread per element: unit c / 32, lane c % 32 of the table's row.
template <DType T>
__global__ void embed_kernel(const uint8_t* table, size_t row_bytes, const int32_t* ids, int64_t cols, int64_t count,
                             float* out, int64_t ld_out) {
  const int64_t i = thread_index();
  if (i >= count) return;
  const int64_t t = i / cols, c = i % cols;
  const uint8_t* row = table + static_cast<int64_t>(ids[t]) * row_bytes;
  out[t * ld_out + c] = load_weight<T>(row, c / 32, static_cast<int>(c % 32));
}

// One thread per (token, head, pair), the pair layout of kernels::rope_rotate.
__global__ void rope_rotate_kernel(float* x, int64_t ld, int n_heads, int head_dim, int n_pairs, bool interleaved,
                                   const float* cos, const float* sin, int64_t count) {
  const int64_t item = thread_index();
  if (item >= count) return;
  const int i = static_cast<int>(item % n_pairs);
  const int64_t head = item / n_pairs;
  const int64_t t = head / n_heads;
  float* v = x + t * ld + (head % n_heads) * head_dim;
  float* a = interleaved ? v + 2 * i : v + i;
  float* b = interleaved ? v + 2 * i + 1 : v + i + n_pairs;
  const float c = cos[t * n_pairs + i], s = sin[t * n_pairs + i];
  const float x0 = *a, x1 = *b;
  *a = x0 * c - x1 * s;
  *b = x1 * c + x0 * s;
}

__device__ inline uint16_t bf16_bits_rne(float v) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16);
}

__device__ inline void store_u16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v & 0xFF);
  p[1] = static_cast<uint8_t>(v >> 8);
}

// F32 / F16 / BF16: one thread per element.
template <DType T>
__global__ void write_kv_kernel(const float* src, int64_t src_stride, const int64_t* slots, uint8_t* dst,
                                size_t row_bytes, int64_t row_elems, int64_t count) {
  const int64_t i = thread_index();
  if (i >= count) return;
  const int64_t t = i / row_elems, e = i % row_elems;
  const float v = src[t * src_stride + e];
  uint8_t* row = dst + slots[t] * row_bytes;
  if constexpr (T == DType::F32) {
    memcpy(row + 4 * e, &v, sizeof v);
  } else if constexpr (T == DType::F16) {
    store_u16(row + 2 * e, __half_as_ushort(__float2half_rn(v)));
  } else {
    store_u16(row + 2 * e, bf16_bits_rne(v));
  }
}

// Q8_0: one warp per (token, block of 32); scale = max |v| / 127 stored as f16,
// codes round(v / scale).
__global__ void write_kv_q8_kernel(const float* src, int64_t src_stride, const int64_t* slots, uint8_t* dst,
                                   size_t row_bytes, int64_t row_elems, int64_t n_warps) {
  const int64_t w = thread_index() / 32;
  const int lane = threadIdx.x % 32;
  if (w >= n_warps) return;
  const int64_t blocks_per_row = (row_elems + 31) / 32;
  const int64_t t = w / blocks_per_row, blk = w % blocks_per_row;
  const int64_t e = blk * 32 + lane;
  const float v = e < row_elems ? src[t * src_stride + e] : 0.0f;
  float amax = fabsf(v);
  for (int offset = 16; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
  uint8_t* b = dst + slots[t] * row_bytes + blk * 34;
  if (lane == 0) store_u16(b, __half_as_ushort(__float2half_rn(d)));
  b[2 + lane] = static_cast<uint8_t>(static_cast<int8_t>(roundf(v * id)));
}

cudaStream_t s_of(Stream& stream) { return stream_of(stream.handle()); }

}  // namespace

void copy_rows(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows, int64_t width,
               Stream& stream) {
  const int64_t count = rows * width;
  if (count <= 0) return;
  copy_rows_kernel<<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(src, ld_src, dst, ld_dst, count, width);
  check_launch("copy_rows_kernel");
}

void gather_rows(const float* src, int64_t width, const int32_t* rows, int64_t n, float* dst, Stream& stream) {
  const int64_t count = n * width;
  if (count <= 0) return;
  gather_rows_kernel<<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(src, width, rows, count, dst);
  check_launch("gather_rows_kernel");
}

void fill_zero(float* x, int64_t n, Stream& stream) {
  if (n > 0) check(cudaMemsetAsync(x, 0, static_cast<size_t>(n) * sizeof(float), s_of(stream)), "cudaMemsetAsync");
}

void add_rows(float* x, const float* delta, int64_t count, Stream& stream) {
  if (count <= 0) return;
  add_kernel<<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(x, delta, count);
  check_launch("add_kernel");
}

void add_bias(float* x, int64_t ld, const float* bias, int64_t width, int64_t n, Stream& stream) {
  const int64_t count = n * width;
  if (count <= 0) return;
  add_bias_kernel<<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(x, ld, bias, width, count);
  check_launch("add_bias_kernel");
}

void add_weighted_rows(const float* y, int64_t width, const int32_t* rows, const float* weights, int64_t n,
                       float* dst, Stream& stream) {
  const int64_t count = n * width;
  if (count <= 0) return;
  add_weighted_rows_kernel<<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(y, width, rows, weights,
                                                                                       count, dst);
  check_launch("add_weighted_rows_kernel");
}

void embed_rows(const DeviceMatrix& table, const int32_t* ids, int64_t n, float* out, int64_t ld_out,
                Stream& stream) {
  const int64_t count = n * table.cols;
  if (count <= 0) return;
  const dim3 grid(blocks_for(count, kThreads));
  const auto* data = table.data.as<uint8_t>();
#define DB_CUDA_EMBED_CASE(T)                                                                                   \
  case T:                                                                                                       \
    embed_kernel<T><<<grid, kThreads, 0, s_of(stream)>>>(data, table.row_bytes, ids, table.cols, count, out, \
                                                         ld_out);                                               \
    break;
  switch (table.dtype) {
    DB_CUDA_EMBED_CASE(DType::F32)
    DB_CUDA_EMBED_CASE(DType::F16)
    DB_CUDA_EMBED_CASE(DType::BF16)
    DB_CUDA_EMBED_CASE(DType::Q8_0)
    DB_CUDA_EMBED_CASE(DType::Q4_0)
    DB_CUDA_EMBED_CASE(DType::Q4_K)
    DB_CUDA_EMBED_CASE(DType::Q6_K)
    default:
      throw Error("CUDA embed_rows: unsupported table type " + dtype_name(table.dtype));
  }
#undef DB_CUDA_EMBED_CASE
  check_launch("embed_kernel");
}

void rope_rotate_rows(float* x, int64_t ld, int n_heads, int head_dim, int64_t n, int n_pairs, RopeStyle style,
                      const float* cos, const float* sin, Stream& stream) {
  DB_CHECK(2 * n_pairs <= head_dim, "rope_rotate_rows: n_pairs past head_dim");
  const int64_t count = n * n_heads * n_pairs;
  if (count <= 0) return;
  rope_rotate_kernel<<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(
      x, ld, n_heads, head_dim, n_pairs, style == RopeStyle::INTERLEAVED, cos, sin, count);
  check_launch("rope_rotate_kernel");
}

void write_kv_rows(const float* src, int64_t src_stride, int64_t n, const int64_t* slots, void* dst, DType dtype,
                   int64_t row_elems, int64_t row_stride, Stream& stream) {
  if (n <= 0 || row_elems <= 0) return;
  const size_t row_bytes = kv_row_bytes(dtype, row_stride);
  auto* out = static_cast<uint8_t*>(dst);
  const int64_t count = n * row_elems;
  switch (dtype) {
    case DType::F32:
      write_kv_kernel<DType::F32><<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(
          src, src_stride, slots, out, row_bytes, row_elems, count);
      break;
    case DType::F16:
      write_kv_kernel<DType::F16><<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(
          src, src_stride, slots, out, row_bytes, row_elems, count);
      break;
    case DType::BF16:
      write_kv_kernel<DType::BF16><<<blocks_for(count, kThreads), kThreads, 0, s_of(stream)>>>(
          src, src_stride, slots, out, row_bytes, row_elems, count);
      break;
    case DType::Q8_0: {
      const int64_t n_warps = n * ((row_elems + 31) / 32);
      write_kv_q8_kernel<<<blocks_for(n_warps * 32, kThreads), kThreads, 0, s_of(stream)>>>(
          src, src_stride, slots, out, row_bytes, row_elems, n_warps);
      break;
    }
    default:
      throw Error("CUDA write_kv_rows: unsupported KV type " + dtype_name(dtype));
  }
  check_launch("write_kv_kernel");
}

}  // namespace db::kernels::cuda

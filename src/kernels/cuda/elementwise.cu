#include "kernels/cuda/elementwise.h"

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/block_decode.h"

namespace db::kernels::cuda {

namespace {

constexpr int kNormThreads = 256;

// One block per row: strided squares, summed per warp, then across the warps.
__global__ void rms_norm_kernel(const float* x, const float* weight, int64_t dim, float eps, float* y) {
  __shared__ float warp_sums[kNormThreads / 32];
  __shared__ float inverse;
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * dim;
  float* yr = y + static_cast<int64_t>(blockIdx.x) * dim;
  float sum = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += kNormThreads) sum += xr[i] * xr[i];
  sum = warp_sum(sum);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < kNormThreads / 32; ++w) total += warp_sums[w];
    inverse = 1.0f / sqrtf(total / static_cast<float>(dim) + eps);
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < dim; i += kNormThreads) yr[i] = weight[i] * (xr[i] * inverse);
}

// One thread per (token, head, pair).
__global__ void rope_kernel(float* x, int64_t n_items, int n_heads, int head_dim, int n_pairs, bool interleaved,
                            const int32_t* positions, const float* inv_freq, float mscale) {
  const int64_t item = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= n_items) return;
  const int i = static_cast<int>(item % n_pairs);
  const int64_t head = item / n_pairs;  // token * n_heads + h
  const int64_t token = head / n_heads;
  const double theta = static_cast<double>(static_cast<float>(positions[token]) * inv_freq[i]);
  const float c = static_cast<float>(cos(theta)) * mscale, s = static_cast<float>(sin(theta)) * mscale;
  float* v = x + head * head_dim;
  float* a = interleaved ? v + 2 * i : v + i;
  float* b = interleaved ? v + 2 * i + 1 : v + i + n_pairs;
  const float x0 = *a, x1 = *b;
  *a = x0 * c - x1 * s;
  *b = x1 * c + x0 * s;
}

__global__ void swiglu_kernel(const float* gate, const float* up, int64_t n, float* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  out[i] = g / (1.0f + expf(-g)) * up[i];
}

}  // namespace

void rms_norm_rows(const float* x, const float* weight, int64_t n_rows, int64_t dim, float eps, float* y,
                   Stream& stream) {
  if (n_rows <= 0) return;
  rms_norm_kernel<<<static_cast<unsigned>(n_rows), kNormThreads, 0, stream_of(stream.handle())>>>(x, weight, dim,
                                                                                                  eps, y);
  check_launch("rms_norm_kernel");
}

void rope(float* x, int64_t n_tokens, int n_heads, int head_dim, int n_pairs, RopeStyle style,
          const int32_t* positions, const float* inv_freq, float mscale, Stream& stream) {
  DB_CHECK(2 * n_pairs <= head_dim, "rope: n_pairs past head_dim");
  const int64_t n_items = n_tokens * n_heads * n_pairs;
  if (n_items <= 0) return;
  rope_kernel<<<blocks_for(n_items, 256), 256, 0, stream_of(stream.handle())>>>(
      x, n_items, n_heads, head_dim, n_pairs, style == RopeStyle::INTERLEAVED, positions, inv_freq, mscale);
  check_launch("rope_kernel");
}

void swiglu(const float* gate, const float* up, int64_t n, float* out, Stream& stream) {
  if (n <= 0) return;
  swiglu_kernel<<<blocks_for(n, 256), 256, 0, stream_of(stream.handle())>>>(gate, up, n, out);
  check_launch("swiglu_kernel");
}

}  // namespace db::kernels::cuda

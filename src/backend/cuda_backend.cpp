#include "backend/cuda_backend.h"

#include <string>
#include <vector>

#include "kernels/cpu/rope.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/rows.h"
#include "kernels/cuda/runtime.h"
#include "util/error.h"

namespace db {

namespace cu = kernels::cuda;

namespace {

constexpr size_t kFloat = sizeof(float);

// Scratch slots: 0 a product's rows before they are spread, 1 a product's gathered
// input rows, 2 a strided norm's packed rows.
constexpr int kProductOut = 0, kProductIn = 1, kNormRows = 2;

int64_t out_ld(const kernels::MatmulTask& t) { return t.ldy == 0 ? t.w->rows() : t.ldy; }

}  // namespace

CudaBackend::CudaBackend() : stream_(std::make_unique<cu::Stream>()) {}

CudaBackend::~CudaBackend() = default;

float* CudaBackend::allocate(int64_t n) {
  return static_cast<float*>(cu::device_alloc_zeroed(static_cast<size_t>(n) * kFloat));
}

void CudaBackend::release(float* p) noexcept { cu::device_free(p); }

void CudaBackend::synchronize() { stream_->synchronize(); }

// A slot is overwritten while kernels that read its last contents may still be
// queued on stream_. That is safe because the upload is a cudaMemcpy on the legacy
// default stream, which waits for all work in blocking streams (stream_ is created
// without cudaStreamNonBlocking, and nothing is built with per-thread default
// streams). Moving uploads onto stream_ asynchronously needs a slot per op instead.
const void* CudaBackend::stage(int slot, const void* host, size_t bytes) {
  auto& b = staging_[slot];
  if (!b || b->bytes() < bytes) b = std::make_unique<cu::DeviceBuffer>(bytes < 4096 ? 4096 : bytes);
  b->upload(host, bytes);
  return b->data();
}

float* CudaBackend::scratch(int slot, int64_t n) {
  auto& b = scratch_[slot];
  const size_t bytes = static_cast<size_t>(n) * kFloat;
  if (!b || b->bytes() < bytes) b = std::make_unique<cu::DeviceBuffer>(bytes);
  return b->as<float>();
}

const cu::DeviceMatrix& CudaBackend::matrix(const TensorView& w) const {
  const auto it = matrices_.find(w.data);
  if (it == matrices_.end())
    throw Error("CudaBackend: a matrix (" + w.shape_str() + ") that was not handed to prepare_matrix");
  return *it->second;
}

const float* CudaBackend::vector(const float* p) const {
  auto it = vectors_.upper_bound(p);
  if (it != vectors_.begin()) {
    --it;
    if (p < it->second.host_end) return it->second.device->as<float>() + (p - it->first);
  }
  throw Error("CudaBackend: a vector that was not handed to prepare_vector");
}

void CudaBackend::to_device(const float* host_src, float* dst, int64_t n) {
  cu::copy_host_to_device(dst, host_src, static_cast<size_t>(n) * kFloat);
}

void CudaBackend::to_host(const float* src, float* host_dst, int64_t n) {
  cu::copy_device_to_host(host_dst, src, static_cast<size_t>(n) * kFloat);
}

void CudaBackend::copy_rows(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows,
                            int64_t width) {
  cu::copy_rows(src, ld_src, dst, ld_dst, rows, width, *stream_);
}

void CudaBackend::gather_rows(const float* src, int64_t width, const int32_t* host_rows, int64_t n, float* dst) {
  if (n <= 0) return;
  const auto* rows = static_cast<const int32_t*>(stage(0, host_rows, static_cast<size_t>(n) * sizeof(int32_t)));
  cu::gather_rows(src, width, rows, n, dst, *stream_);
}

void CudaBackend::fill_zero(float* x, int64_t n) { cu::fill_zero(x, n, *stream_); }

TensorView CudaBackend::prepare_matrix(const TensorView& host) {
  if (host.data == nullptr || matrices_.count(host.data) != 0) return host;
  if (host.layout != TensorLayout::Rows)
    throw Error("CudaBackend: matrix " + host.shape_str() +
                " is in a packed CPU layout; the CUDA backend takes the file's row layout");
  auto m = std::make_unique<cu::DeviceMatrix>(cu::upload_matrix(host.dtype, host.data, host.rows(), host.cols()));
  TensorView device = host;
  device.data = m->data.data();
  matrices_.emplace(device.data, std::move(m));
  return device;
}

void CudaBackend::prepare_vector(std::span<const float> host) {
  if (host.empty() || vectors_.count(host.data()) != 0) return;
  auto b = std::make_unique<cu::DeviceBuffer>(host.size() * kFloat);
  b->upload(host.data(), host.size() * kFloat);
  vectors_.emplace(host.data(), Vector{host.data() + host.size(), std::move(b)});
}

void CudaBackend::matmul(const TensorView& w, const float* x, int64_t n, float* y) {
  cu::matmul(matrix(w), x, n, y, *stream_);
}

void CudaBackend::matmul_to_host(const TensorView& w, const float* x, int64_t n, float* host_y) {
  if (n <= 0) return;
  float* y = scratch(kProductOut, n * w.rows());
  cu::matmul(matrix(w), x, n, y, *stream_);
  stream_->synchronize();
  cu::copy_device_to_host(host_y, y, static_cast<size_t>(n * w.rows()) * kFloat);
}

void CudaBackend::matmul_group(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t n) {
  matmul_heads(tasks, n_tasks, x, tasks[0].w->cols(), 0, n);
}

void CudaBackend::matmul_swiglu(const TensorView& gate, const TensorView& up, const float* x, int64_t n, float* out,
                                float* up_scratch) {
  cu::matmul(matrix(gate), x, n, out, *stream_);
  cu::matmul(matrix(up), x, n, up_scratch, *stream_);
  cu::swiglu(out, up_scratch, n * gate.rows(), out, *stream_);
}

void CudaBackend::matmul_heads(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t ldx,
                               int64_t head_stride, int64_t n) {
  if (n <= 0) return;
  for (int i = 0; i < n_tasks; ++i) {
    const kernels::MatmulTask& t = tasks[i];
    const int64_t cols = t.w->cols(), rows = t.w->rows();
    const float* xi = x + i * head_stride;
    if (ldx != cols) {  // the task's columns of each token row, packed
      float* packed = scratch(kProductIn, n * cols);
      cu::copy_rows(xi, ldx, packed, cols, n, cols, *stream_);
      xi = packed;
    }
    if (out_ld(t) == rows) {
      cu::matmul(matrix(*t.w), xi, n, t.y, *stream_);
    } else {
      float* y = scratch(kProductOut, n * rows);
      cu::matmul(matrix(*t.w), xi, n, y, *stream_);
      cu::copy_rows(y, rows, t.y, out_ld(t), n, rows, *stream_);
    }
  }
}

void CudaBackend::embed_rows(const TensorView& table, const int32_t* host_ids, int64_t n, float* out,
                             int64_t ld_out) {
  if (n <= 0) return;
  const auto* ids = static_cast<const int32_t*>(stage(0, host_ids, static_cast<size_t>(n) * sizeof(int32_t)));
  cu::embed_rows(matrix(table), ids, n, out, ld_out, *stream_);
}

void CudaBackend::rope_tables(const int32_t* host_positions, int64_t n, const float* host_inv_freq, int n_pairs,
                              float mscale, float* cos, float* sin) {
  // The CPU's factors, computed on the host (n * n_pairs values) and uploaded: the
  // device rotates with the same bytes.
  std::vector<float> c(static_cast<size_t>(n * n_pairs)), s(c.size());
  for (int64_t t = 0; t < n; ++t)
    kernels::rope_angles(host_positions[t], host_inv_freq, n_pairs, mscale, c.data() + t * n_pairs,
                         s.data() + t * n_pairs);
  cu::copy_host_to_device(cos, c.data(), c.size() * kFloat);
  cu::copy_host_to_device(sin, s.data(), s.size() * kFloat);
}

void CudaBackend::norm_rows(const float* x, int64_t ld_x, const float* host_w, int64_t n, int64_t dim, float eps,
                            float* y, int64_t ld_y) {
  const float* w = vector(host_w);
  if (ld_x == dim && ld_y == dim) {
    cu::rms_norm_rows(x, w, n, dim, eps, y, *stream_);
    return;
  }
  float* packed = scratch(kNormRows, n * dim);
  cu::copy_rows(x, ld_x, packed, dim, n, dim, *stream_);
  cu::rms_norm_rows(packed, w, n, dim, eps, packed, *stream_);
  cu::copy_rows(packed, dim, y, ld_y, n, dim, *stream_);
}

void CudaBackend::add_rows(float* x, const float* delta, int64_t n, int64_t dim) {
  cu::add_rows(x, delta, n * dim, *stream_);
}

void CudaBackend::add_rows_then_norm(float* x, float* delta, const float* host_w, int64_t n, int64_t dim,
                                     float eps) {
  cu::add_rows(x, delta, n * dim, *stream_);
  cu::rms_norm_rows(x, vector(host_w), n, dim, eps, delta, *stream_);
}

void CudaBackend::add_bias(float* x, int64_t ld, std::span<const float> host_bias, int64_t n) {
  if (host_bias.empty()) return;
  cu::add_bias(x, ld, vector(host_bias.data()), static_cast<int64_t>(host_bias.size()), n, *stream_);
}

void CudaBackend::rope(const RopeHeads* sets, int n_sets, int64_t n, const RopeFactors& f) {
  for (int i = 0; i < n_sets; ++i)
    cu::rope_rotate_rows(sets[i].x, sets[i].ld, sets[i].n_heads, sets[i].head_dim, n, f.n_pairs, f.style, f.cos,
                         f.sin, *stream_);
}

void CudaBackend::add_weighted_rows(const float* y, int64_t width, const int32_t* host_rows,
                                    const float* host_weights, int64_t n, float* dst) {
  if (n <= 0) return;
  const auto* rows = static_cast<const int32_t*>(stage(0, host_rows, static_cast<size_t>(n) * sizeof(int32_t)));
  const auto* weights = static_cast<const float*>(stage(1, host_weights, static_cast<size_t>(n) * kFloat));
  cu::add_weighted_rows(y, width, rows, weights, n, dst, *stream_);
}

void CudaBackend::write_kv(const float* k, const float* v, int64_t src_stride, int64_t n, const int64_t* host_slots,
                           const kernels::PagedKVLayerOut& dst) {
  if (n <= 0) return;
  for (int64_t i = 0; i < n; ++i)
    if (host_slots[i] < 0 || host_slots[i] >= dst.num_slots)
      throw Error("CudaBackend::write_kv: slot " + std::to_string(host_slots[i]) + " outside the cache's " +
                  std::to_string(dst.num_slots));
  const auto* slots = static_cast<const int64_t*>(stage(0, host_slots, static_cast<size_t>(n) * sizeof(int64_t)));
  cu::write_kv_rows(k, src_stride, n, slots, dst.k, dst.dtype, dst.k_row_elems, dst.k_row_stride, *stream_);
  if (dst.v != nullptr)
    cu::write_kv_rows(v, src_stride, n, slots, dst.v, dst.dtype, dst.v_row_elems, dst.v_row_stride, *stream_);
}

void CudaBackend::paged_attention(const kernels::AttentionQueries& q, const kernels::PagedKVLayer& kv, float* out) {
  const cu::DeviceAttentionIndex index = cu::upload_attention_index(q, kv.num_slots);
  cu::paged_attention(q.q, q.n_heads, q.scale, index, kv, out, *stream_);
  // The index's buffers are freed on return: the kernel must be done with them.
  stream_->synchronize();
}

}  // namespace db

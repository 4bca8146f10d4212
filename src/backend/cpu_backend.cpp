#include "backend/cpu_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/cpu/attention_kv_write.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/rope.h"
#include "util/error.h"

namespace db {

namespace {

// Below this many floats a copy runs on the calling thread: a fork costs more.
constexpr int64_t kSerialCopyFloats = 16384;
// Rows below which a gather / scatter of whole rows runs on the calling thread.
constexpr int64_t kSerialRows = 16;

}  // namespace

ThreadPool& CpuBackend::pool() {
  DB_CHECK(pool_ != nullptr, "CpuBackend: an op ran before set_host_pool");
  return *pool_;
}

float* CpuBackend::allocate(int64_t n) {
  auto* p = static_cast<float*>(std::calloc(static_cast<size_t>(n), sizeof(float)));
  if (p == nullptr) throw Error("CpuBackend: cannot allocate " + std::to_string(n) + " floats");
  return p;
}

void CpuBackend::release(float* p) noexcept { std::free(p); }

void CpuBackend::to_device(const float* host_src, float* dst, int64_t n) {
  std::memcpy(dst, host_src, static_cast<size_t>(n) * sizeof(float));
}

void CpuBackend::to_host(const float* src, float* host_dst, int64_t n) {
  std::memcpy(host_dst, src, static_cast<size_t>(n) * sizeof(float));
}

void CpuBackend::copy_rows(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows,
                           int64_t width) {
  const auto copy = [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      std::memcpy(dst + r * ld_dst, src + r * ld_src, static_cast<size_t>(width) * sizeof(float));
  };
  // One row (a whole buffer, as ComputeBackend::grow copies) stays on the calling thread.
  if (rows == 1 || rows * width < kSerialCopyFloats) copy(0, rows); else pool().parallel_for(rows, copy);
}

void CpuBackend::gather_rows(const float* src, int64_t width, const int32_t* host_rows, int64_t n, float* dst) {
  const auto gather = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) std::copy_n(src + host_rows[i] * width, width, dst + i * width);
  };
  if (n < kSerialRows) gather(0, n); else pool().parallel_for(n, gather);
}

void CpuBackend::fill_zero(float* x, int64_t n) { std::fill(x, x + n, 0.0f); }

void CpuBackend::matmul(const TensorView& w, const float* x, int64_t n, float* y) {
  kernels::matmul(w, x, n, y, pool());
}

void CpuBackend::matmul_to_host(const TensorView& w, const float* x, int64_t n, float* host_y) {
  kernels::matmul(w, x, n, host_y, pool());
}

void CpuBackend::matmul_group(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t n) {
  kernels::matmul_group(tasks, n_tasks, x, n, pool());
}

void CpuBackend::matmul_swiglu(const TensorView& gate, const TensorView& up, const float* x, int64_t n, float* out,
                               float* up_scratch) {
  kernels::matmul_swiglu(gate, up, x, n, out, up_scratch, pool());
}

void CpuBackend::matmul_heads(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t ldx,
                              int64_t head_stride, int64_t n) {
  kernels::matmul_heads(tasks, n_tasks, x, ldx, head_stride, n, pool());
}

void CpuBackend::embed_rows(const TensorView& table, const int32_t* host_ids, int64_t n, float* out, int64_t ld_out) {
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) kernels::dequantize_row(table, host_ids[t], out + t * ld_out);
  });
}

void CpuBackend::rope_tables(const int32_t* host_positions, int64_t n, const float* host_inv_freq, int n_pairs,
                             float mscale, float* cos, float* sin) {
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      kernels::rope_angles(host_positions[t], host_inv_freq, n_pairs, mscale, cos + t * n_pairs, sin + t * n_pairs);
  });
}

void CpuBackend::norm_rows(const float* x, int64_t ld_x, const float* host_w, int64_t n, int64_t dim, float eps,
                           float* y, int64_t ld_y) {
  const bool packed = ld_x == dim && ld_y == dim;
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    if (packed) {  // several rows at once: the same bytes per row as rms_norm
      kernels::rms_norm_rows(x + begin * dim, host_w, end - begin, dim, eps, y + begin * dim);
      return;
    }
    for (int64_t t = begin; t < end; ++t) kernels::rms_norm(x + t * ld_x, host_w, dim, eps, y + t * ld_y);
  });
}

void CpuBackend::add_rows(float* x, const float* delta, int64_t n, int64_t dim) {
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin * dim; i < end * dim; ++i) x[i] += delta[i];
  });
}

void CpuBackend::add_rows_then_norm(float* x, float* delta, const float* host_w, int64_t n, int64_t dim, float eps) {
  // A few rows at a time: one pass over them instead of two, and the norm sums several rows at once.
  constexpr int64_t kRowsPerPass = 4;
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t r0 = begin; r0 < end; r0 += kRowsPerPass) {
      const int64_t rows = std::min(kRowsPerPass, end - r0);
      float* xr = x + r0 * dim;
      float* dr = delta + r0 * dim;
      for (int64_t i = 0; i < rows * dim; ++i) xr[i] += dr[i];
      kernels::rms_norm_rows(xr, host_w, rows, dim, eps, dr);
    }
  });
}

void CpuBackend::add_bias(float* x, int64_t ld, std::span<const float> host_bias, int64_t n) {
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* row = x + t * ld;
      for (size_t i = 0; i < host_bias.size(); ++i) row[i] += host_bias[i];
    }
  });
}

void CpuBackend::rope(const RopeHeads* sets, int n_sets, int64_t n, const RopeFactors& f) {
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      for (int i = 0; i < n_sets; ++i)
        kernels::rope_rotate(sets[i].x + t * sets[i].ld, sets[i].n_heads, sets[i].head_dim, f.n_pairs, f.style,
                             f.cos + t * f.n_pairs, f.sin + t * f.n_pairs);
  });
}

void CpuBackend::add_weighted_rows(const float* y, int64_t width, const int32_t* host_rows, const float* host_weights,
                                   int64_t n, float* dst) {
  // The rows are distinct, so the threads split them.
  const auto scatter = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float wt = host_weights[i];
      const float* yr = y + i * width;
      float* r = dst + int64_t{host_rows[i]} * width;
      for (int64_t d = 0; d < width; ++d) r[d] += wt * yr[d];
    }
  };
  if (n < kSerialRows) scatter(0, n); else pool().parallel_for(n, scatter);
}

void CpuBackend::write_kv(const float* k, const float* v, int64_t src_stride, int64_t n, const int64_t* host_slots,
                          const kernels::PagedKVLayerOut& dst) {
  // Rows go to distinct slots (the batch was checked), so the threads split them.
  pool().parallel_for(n, [&](int64_t begin, int64_t end) {
    kernels::write_kv_rows(k + begin * src_stride, v != nullptr ? v + begin * src_stride : nullptr, src_stride,
                           end - begin, host_slots + begin, dst);
  });
}

void CpuBackend::paged_attention(const kernels::AttentionQueries& q, const kernels::PagedKVLayer& kv, float* out) {
  kernels::paged_attention(q, kv, out, attention_, pool());
}

}  // namespace db

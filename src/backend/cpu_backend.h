// The CPU compute backend: host memory for buffers and weights (the loaded
// views, repacked for this CPU's ISA level, are used as they are) and the
// kernels of src/kernels run on the host pool of the step. Its ops give the
// bytes the model code got calling those kernels directly.
#pragma once
#include <memory>

#include "backend/compute_backend.h"

namespace db {

class CpuBackend final : public ComputeBackend {
 public:
  const char* name() const override { return "cpu"; }
  void set_host_pool(ThreadPool& pool) override { pool_ = &pool; }

  void to_device(const float* host_src, float* dst, int64_t n) override;
  void to_host(const float* src, float* host_dst, int64_t n) override;
  void copy_rows(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows, int64_t width) override;
  void gather_rows(const float* src, int64_t width, const int32_t* host_rows, int64_t n, float* dst) override;
  void fill_zero(float* x, int64_t n) override;

  TensorView prepare_matrix(const TensorView& host) override { return host; }
  void prepare_vector(std::span<const float> host) override { (void)host; }

  void matmul(const TensorView& w, const float* x, int64_t n, float* y) override;
  void matmul_to_host(const TensorView& w, const float* x, int64_t n, float* host_y) override;
  void matmul_group(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t n) override;
  void matmul_swiglu(const TensorView& gate, const TensorView& up, const float* x, int64_t n, float* out,
                     float* up_scratch) override;
  void matmul_heads(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t ldx, int64_t head_stride,
                    int64_t n) override;

  void embed_rows(const TensorView& table, const int32_t* host_ids, int64_t n, float* out, int64_t ld_out) override;
  void rope_tables(const int32_t* host_positions, int64_t n, const float* host_inv_freq, int n_pairs, float mscale,
                   float* cos, float* sin) override;
  void norm_rows(const float* x, int64_t ld_x, const float* host_w, int64_t n, int64_t dim, float eps, float* y,
                 int64_t ld_y) override;
  void add_rows(float* x, const float* delta, int64_t n, int64_t dim) override;
  void add_rows_then_norm(float* x, float* delta, const float* host_w, int64_t n, int64_t dim, float eps) override;
  void add_bias(float* x, int64_t ld, std::span<const float> host_bias, int64_t n) override;
  void rope(const RopeHeads* sets, int n_sets, int64_t n, const RopeFactors& f) override;
  void add_weighted_rows(const float* y, int64_t width, const int32_t* host_rows, const float* host_weights, int64_t n,
                         float* dst) override;

  void write_kv(const float* k, const float* v, int64_t src_stride, int64_t n, const int64_t* host_slots,
                const kernels::PagedKVLayerOut& dst) override;
  void paged_attention(const kernels::AttentionQueries& q, const kernels::PagedKVLayer& kv, float* out) override;

 protected:
  float* allocate(int64_t n) override;
  void release(float* p) noexcept override;

 private:
  // The step's pool; throws db::Error before set_host_pool.
  ThreadPool& pool();

  ThreadPool* pool_ = nullptr;
  kernels::AttentionWorkspace attention_;
};

}  // namespace db

// The CUDA compute backend (built with DB_CUDA): buffers in device memory, weights
// uploaded once in the file's block layout (Rows; the CPU's repacked panels are
// refused), the small f32 vectors uploaded and found again by their host address,
// and every op run on the device by src/kernels/cuda on one stream. The host index
// arrays an op takes (ids, rows, slots, block tables) are uploaded per call. Each
// token's result is computed from its own row alone with a fixed reduction order,
// so a token's output does not depend on the rest of its batch (docs/backend.md).
// The host pool is not used. Construction throws db::Error "no CUDA device: ..."
// where device 0 is not usable.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>

#include "backend/compute_backend.h"

namespace db {

namespace kernels::cuda {
struct DeviceMatrix;
class DeviceBuffer;
class Stream;
}  // namespace kernels::cuda

class CudaBackend final : public ComputeBackend {
 public:
  CudaBackend();
  ~CudaBackend() override;

  const char* name() const override { return "cuda"; }
  void set_host_pool(ThreadPool& pool) override { (void)pool; }

  void to_device(const float* host_src, float* dst, int64_t n) override;
  void to_host(const float* src, float* host_dst, int64_t n) override;
  void copy_rows(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows, int64_t width) override;
  void gather_rows(const float* src, int64_t width, const int32_t* host_rows, int64_t n, float* dst) override;
  void fill_zero(float* x, int64_t n) override;

  // Throws db::Error for a matrix the device kernels do not read (a panel layout,
  // a type other than F32 / F16 / BF16 / Q8_0 / Q4_0 / Q4_K / Q6_K, cols not whole blocks).
  TensorView prepare_matrix(const TensorView& host) override;
  void prepare_vector(std::span<const float> host) override;

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

  // Waits for every op launched so far; throws the first asynchronous error.
  void synchronize();

 protected:
  float* allocate(int64_t n) override;
  void release(float* p) noexcept override;

 private:
  const kernels::cuda::DeviceMatrix& matrix(const TensorView& w) const;
  // The device copy of the prepared vector holding host address p.
  const float* vector(const float* p) const;
  // A device copy of n host elements in staging slot `slot` (grown as needed).
  const void* stage(int slot, const void* host, size_t bytes);
  // A device scratch array of at least n floats in scratch slot `slot`.
  float* scratch(int slot, int64_t n);

  std::unique_ptr<kernels::cuda::Stream> stream_;
  std::map<const void*, std::unique_ptr<kernels::cuda::DeviceMatrix>> matrices_;  // by device address
  struct Vector {
    const float* host_end;
    std::unique_ptr<kernels::cuda::DeviceBuffer> device;
  };
  std::map<const float*, Vector> vectors_;  // by host address
  static constexpr int kSlots = 3;
  std::unique_ptr<kernels::cuda::DeviceBuffer> staging_[kSlots];
  std::unique_ptr<kernels::cuda::DeviceBuffer> scratch_[kSlots];
};

}  // namespace db

// The seam between the model code and the hardware it runs on: the decoders
// (model/llama_decoder.h, model/deepseek_decoder.h, model/moe_feed_forward.h)
// compute only through a ComputeBackend, which owns their activation buffers
// and their weights' working copies; backend/cpu_backend.h is the CPU one.
// What stays on the host, whatever the backend: the batch and its metadata
// (token ids, positions, block tables, slot mapping), the MoE routing decision,
// the collectives of a model split across processes, and the logits the sampler
// reads. docs/backend.md describes the whole contract.
//
// Pointers: an argument named `host_*` is host memory; every other float
// pointer is an address inside a DeviceBuffer of this backend (or a weight or
// KV array it was handed). Numerics: the CPU backend's ops give the bytes of
// the kernels they wrap; any backend keeps a token's result independent of the
// rest of its batch (docs/backend.md).
#pragma once
#include <cstdint>
#include <span>

#include "backend/device_buffer.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/attention_kv_write.h"
#include "kernels/cpu/rope.h"
#include "kernels/matmul.h"
#include "tensor/tensor.h"
#include "util/thread_pool.h"

namespace db {

// Heads to rotate in each of a step's token rows: n_heads vectors head_dim
// floats apart from x + t * ld, each rotated over its first 2 * n_pairs floats.
struct RopeHeads {
  float* x;
  int64_t ld;
  int n_heads;
  int head_dim;
};

// The step's RoPE factors (rope_tables' output) and pair layout.
struct RopeFactors {
  const float* cos;  // [n_tokens][n_pairs]
  const float* sin;
  int n_pairs;
  kernels::RopeStyle style;
};

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;

  virtual const char* name() const = 0;

  // The host threads of the ops that follow (the CPU backend computes on them;
  // others may run host work there). The model sets the pool its forward got.
  virtual void set_host_pool(ThreadPool& pool) = 0;

  // --- Buffers ---
  // b.size() >= n floats afterwards, contents kept, new floats zero. Throws
  // db::Error for a buffer another backend grew.
  void grow(DeviceBuffer& b, int64_t n);
  virtual void to_device(const float* host_src, float* dst, int64_t n) = 0;
  virtual void to_host(const float* src, float* host_dst, int64_t n) = 0;
  // dst row r (ld_dst apart) = the first `width` floats of src row r (ld_src apart).
  virtual void copy_rows(const float* src, int64_t ld_src, float* dst, int64_t ld_dst, int64_t rows,
                         int64_t width) = 0;
  // dst row i (width floats) = src row host_rows[i], i < n.
  virtual void gather_rows(const float* src, int64_t width, const int32_t* host_rows, int64_t n, float* dst) = 0;
  virtual void fill_zero(float* x, int64_t n) = 0;

  // --- Weights (each handed over once, after loading) ---
  // The view the ops take for a loaded matrix (its dtype and layout kept; the
  // CPU backend returns it as is). A view with null data stays null (an expert
  // another rank holds); a view this backend returned is returned as is (the MTP
  // layer may share the model's embedding and head). The host view's memory must
  // outlive the backend's use.
  virtual TensorView prepare_matrix(const TensorView& host) = 0;
  // A small f32 parameter (norm weight, bias, router, RoPE frequencies) the ops
  // will be given by its host address; it must stay at that address.
  virtual void prepare_vector(std::span<const float> host) = 0;

  // --- Products (kernels/matmul.h for their shapes and numerics) ---
  virtual void matmul(const TensorView& w, const float* x, int64_t n, float* y) = 0;
  // matmul whose output rows land in host memory (the logits).
  virtual void matmul_to_host(const TensorView& w, const float* x, int64_t n, float* host_y) = 0;
  virtual void matmul_group(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t n) = 0;
  virtual void matmul_swiglu(const TensorView& gate, const TensorView& up, const float* x, int64_t n, float* out,
                             float* up_scratch) = 0;
  virtual void matmul_heads(const kernels::MatmulTask* tasks, int n_tasks, const float* x, int64_t ldx,
                            int64_t head_stride, int64_t n) = 0;

  // --- Rows ---
  // out row t (ld_out apart) = row host_ids[t] of the embedding table, t < n.
  virtual void embed_rows(const TensorView& table, const int32_t* host_ids, int64_t n, float* out,
                          int64_t ld_out) = 0;
  // cos / sin [n][n_pairs] = the factors of positions host_positions (kernels::rope_angles).
  virtual void rope_tables(const int32_t* host_positions, int64_t n, const float* host_inv_freq, int n_pairs,
                           float mscale, float* cos, float* sin) = 0;
  // y row = RMSNorm(x row, the first dim floats) * host_w, rows ld_x / ld_y apart (y may alias x).
  virtual void norm_rows(const float* x, int64_t ld_x, const float* host_w, int64_t n, int64_t dim, float eps,
                         float* y, int64_t ld_y) = 0;
  // x += delta over n contiguous rows of dim.
  virtual void add_rows(float* x, const float* delta, int64_t n, int64_t dim) = 0;
  // x += delta, then delta = RMSNorm(x) * host_w (the next block's input).
  virtual void add_rows_then_norm(float* x, float* delta, const float* host_w, int64_t n, int64_t dim,
                                  float eps) = 0;
  // x row t (ld apart) += host_bias (its size() floats), t < n.
  virtual void add_bias(float* x, int64_t ld, std::span<const float> host_bias, int64_t n) = 0;
  // Rotates every set's heads of every token row by the factors of that row.
  virtual void rope(const RopeHeads* sets, int n_sets, int64_t n, const RopeFactors& f) = 0;
  // dst row host_rows[i] += host_weights[i] * y row i (width floats), i < n; the
  // rows named are distinct.
  virtual void add_weighted_rows(const float* y, int64_t width, const int32_t* host_rows, const float* host_weights,
                                 int64_t n, float* dst) = 0;

  // --- Attention over the paged KV cache (kernels/cpu/attention*.h) ---
  // Token i's K / V rows (src_stride floats apart) into slot host_slots[i].
  virtual void write_kv(const float* k, const float* v, int64_t src_stride, int64_t n, const int64_t* host_slots,
                        const kernels::PagedKVLayerOut& dst) = 0;
  // q.q and out are backend addresses; q's metadata (query_start, positions,
  // block tables) is host memory.
  virtual void paged_attention(const kernels::AttentionQueries& q, const kernels::PagedKVLayer& kv, float* out) = 0;

 protected:
  // n floats of zeroed backend memory; throws db::Error when none is left.
  virtual float* allocate(int64_t n) = 0;
  virtual void release(float* p) noexcept = 0;

 private:
  friend class DeviceBuffer;
};

}  // namespace db

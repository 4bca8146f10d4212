// Paged causal attention on the device over the CPU's cache layout
// (kernels/cpu/attention.h): MHA and GQA, decode and chunked prefill, and MLA's latent
// form (absorbed decode: one kv head whose value is a prefix of its key row).
#pragma once
#include <cstdint>

#include "kernels/cpu/attention.h"
#include "kernels/cuda/runtime.h"

namespace db::kernels::cuda {

// One step's row -> sequence map, positions and block tables in device memory.
struct DeviceAttentionIndex {
  DeviceBuffer row_seq;      // int32 per query row
  DeviceBuffer positions;    // int32 per query row
  DeviceBuffer table_start;  // int32, n_seqs + 1 offsets into tables
  DeviceBuffer tables;       // int32, the sequences' block tables one after another
  int n_tokens = 0;
  int block_size = 0;
};

// Builds the index from the host-side queries (their q is not read), after the checks
// kernels::paged_attention makes: every query's block table covers its position and
// names blocks inside a cache of num_slots slots. Throws db::Error otherwise.
DeviceAttentionIndex upload_attention_index(const AttentionQueries& queries, int64_t num_slots);

// Largest key or value width the kernel takes: MLA's latent rows (512 + 64), the widest
// this project's models use; each lane holds 576 / 32 of them in registers.
inline constexpr int kMaxAttentionHeadDim = 576;

// out [n_tokens][n_heads][v_head_dim] = softmax(scale * q.k) v over positions [0, p]
// of each query's sequence, as kernels::paged_attention defines it. q (device,
// [n_tokens][n_heads][k_head_dim]) and kv.k / kv.v (device, the CPU's layout, dtype
// F32, F16, BF16 or Q8_0) must hold the step's own K/V already. One warp per (query
// row, head) walks the positions in order with an online softmax in f32.
void paged_attention(const float* q, int n_heads, float scale, const DeviceAttentionIndex& index,
                     const PagedKVLayer& kv, float* out, Stream& stream);

}  // namespace db::kernels::cuda

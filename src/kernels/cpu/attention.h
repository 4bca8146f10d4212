// Causal attention of a flat variable-length batch over the paged KV cache.
//
// Sequence s owns query rows [query_start[s], query_start[s+1]). The query at
// position p attends to positions [0, p] of its sequence, read through its block
// table (position j: block block_table[j / block_size], row j % block_size), so
// the new tokens' K/V must be written to the cache first. Grouped-query
// attention: query head h reads kv head h / (n_heads / n_kv_heads).
//
// Numerics: f32 throughout; softmax is computed online over chunks of 16
// consecutive positions (flash style; a chunk may span two KV blocks), so no
// [queries x keys] matrix exists. The chunks are grouped into fixed spans of
// 256 positions from position 0, each folded on its own and merged in order
// (attention_spans.h), so that a long sequence's keys can be split over
// threads (split-K) without changing a bit of the result. Each ISA level has its
// own summation order, but within a level a query's result depends only on its
// own vector, its position and its sequence's cached K/V: never on the rest of
// the batch, on how the sequence was split into steps, or on the block size.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "tensor/dtype.h"
#include "util/cpu_features.h"
#include "util/thread_pool.h"

namespace db::kernels {

// One layer's K and V arrays, elements of dtype (Q8_0: each slot's row is
// kv_row_bytes(Q8_0, row_stride) bytes of 32-element blocks from the row's
// start, so a head may begin inside a block). Kv head h of slot s starts at
// element s * k_row_stride + h * k_head_dim of k (its k_head_dim keys) and at
// s * v_row_stride + h * v_head_dim of v (its v_head_dim values).
//  - key_value(): separate arrays [num_slots][n_kv_heads][head_dim], equal widths.
//  - latent(): MLA's weight-absorbed form: one kv head whose value is the first
//    v_head_dim elements of its key row (v aliases k, same stride).
// Any other combination of widths and strides is allowed too (each row_stride
// at least n_kv_heads times its head width).
struct PagedKVLayer {
  const void* k;
  const void* v;
  DType dtype;        // F32, F16, BF16 or Q8_0
  int64_t num_slots;  // rows (slots) in each array
  int n_kv_heads;
  int k_head_dim;        // key width: also the queries' width
  int v_head_dim;        // value width: also the output's width
  int64_t k_row_stride;  // elements from one slot's K row to the next
  int64_t v_row_stride;  // likewise for V

  static PagedKVLayer key_value(const void* k, const void* v, DType dtype, int64_t num_slots, int n_kv_heads,
                                int head_dim) {
    const int64_t row = int64_t{n_kv_heads} * head_dim;
    return {k, v, dtype, num_slots, n_kv_heads, head_dim, head_dim, row, row};
  }
  static PagedKVLayer latent(const void* kv, DType dtype, int64_t num_slots, int k_head_dim, int v_head_dim) {
    return {kv, kv, dtype, num_slots, 1, k_head_dim, v_head_dim, k_head_dim, k_head_dim};
  }
  // Whether every V row is a prefix of the K row of the same slot and head (the latent layout).
  bool values_in_keys() const {
    return v == k && v_row_stride == k_row_stride && v_head_dim <= k_head_dim &&
           (n_kv_heads == 1 || v_head_dim == k_head_dim);
  }
};

// The queries of one step and where each sequence's keys live.
struct AttentionQueries {
  const float* q;  // [n_tokens][n_heads][k_head_dim]
  int n_heads;     // a multiple of the layer's n_kv_heads
  int n_seqs;
  const int32_t* query_start;                // n_seqs + 1 offsets into the query rows
  const int32_t* positions;                  // per query row: its position in its sequence
  const std::vector<int32_t>* block_tables;  // n_seqs block tables
  int block_size;                            // positions per KV block
  float scale;                               // multiplies q.k
};

// Scratch reused across calls (per-thread buffers, work list); grows, never shrinks.
class AttentionWorkspace {
 public:
  struct Item {
    int32_t seq;                 // sequence
    int32_t kv_begin, kv_end;    // kv heads [kv_begin, kv_end), each with its group of query heads
    int32_t row_begin, row_end;  // query rows [row_begin, row_end) of seq
    int32_t cost_class;          // bit width of (key chunks x rows): heavier classes run first
    int32_t span_begin, span_end;  // key positions folded: all the rows reach, or one span of them;
                                   // span_end never passes the rows' last position + 1
    int32_t split;                 // -1: the item covers all its spans; else its index in `splits`
  };
  // The items sharing rows and kv heads when their spans run as separate items.
  struct Split {
    int64_t offset;   // into `partials`: one record set per span, in span order
    int32_t n_spans;  // items of the split
  };
  struct Thread {
    std::vector<float> scratch;   // carved up by the ISA's tile kernel (attention_ops.h)
    std::vector<int32_t> index;   // likewise, for integers
    std::vector<float> partials;  // two record sets (attention_spans.h): running and current span
  };
  std::vector<Item> items;  // heaviest first
  std::vector<Thread> threads;
  std::vector<Split> splits;
  std::vector<float> partials;                      // the splits' span records
  std::unique_ptr<std::atomic<int32_t>[]> pending;  // per split: its spans not yet folded
  size_t pending_size = 0;
};

// out: [n_tokens][n_heads][v_head_dim]. Work is split over (sequence, tile of
// query rows, kv head or all kv heads), and over spans of keys when there are
// too few such items for the threads, and spread dynamically over the pool's threads.
// Throws db::Error (before any work starts) when a block table does not cover a
// query's position or names a block outside the cache, or the layer's shape is
// inconsistent.
// Uses the process-wide ISA level (util/cpu_features.h).
void paged_attention(const AttentionQueries& queries, const PagedKVLayer& kv, float* out, AttentionWorkspace& ws,
                     ThreadPool& pool);
// The same with an explicit ISA level (which must be supported), for tests.
void paged_attention_isa(IsaLevel level, const AttentionQueries& queries, const PagedKVLayer& kv, float* out,
                         AttentionWorkspace& ws, ThreadPool& pool);

}  // namespace db::kernels

// Causal attention of a flat variable-length batch over the paged KV cache.
//
// Sequence s owns query rows [query_start[s], query_start[s+1]). The query at
// position p attends to positions [0, p] of its sequence, read through its block
// table (position j: block block_table[j / block_size], row j % block_size), so
// the new tokens' K/V must be written to the cache first. Grouped-query
// attention: query head h reads kv head h / (n_heads / n_kv_heads).
//
// Numerics: f32 throughout; softmax is computed online 16 keys at a time (flash
// style; a block size that is not a multiple of 16 uses whole blocks), so no
// [queries x keys] matrix exists. A query's result depends only on its own
// vector, its position and its sequence's cached K/V: never on the rest of the
// batch, on how the sequence was split into steps, or on the block size.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/cpu/softmax.h"
#include "tensor/dtype.h"
#include "util/cpu_features.h"
#include "util/thread_pool.h"

namespace db::kernels {

// One layer's K and V arrays: [num_slots][n_kv_heads][head_dim] elements of dtype.
struct PagedKVLayer {
  const void* k;
  const void* v;
  DType dtype;        // F32, F16 or BF16
  int64_t num_slots;  // rows in each array
  int n_kv_heads;
  int head_dim;
};

// The queries of one step and where each sequence's keys live.
struct AttentionQueries {
  const float* q;  // [n_tokens][n_heads][head_dim]
  int n_heads;     // a multiple of the layer's n_kv_heads
  int n_seqs;
  const int32_t* query_start;                // n_seqs + 1 offsets into the query rows
  const int32_t* positions;                  // per query row: its position in its sequence
  const std::vector<int32_t>* block_tables;  // n_seqs block tables
  int block_size;                            // positions per KV block
  float scale;                               // multiplies q.k (usually 1/sqrt(head_dim))
};

// Scratch reused across calls (per-thread buffers, work list); grows, never shrinks.
class AttentionWorkspace {
 public:
  struct Item {
    int32_t seq, kv_head, row_begin, row_end;  // query rows [row_begin, row_end) of seq
  };
  struct Thread {
    std::vector<float> k, v;           // one chunk of keys / values of one kv head, as f32: [chunk][head_dim]
    std::vector<float> scores;         // [chunk]
    std::vector<OnlineSoftmax> state;  // per query of the tile
    std::vector<float> acc;            // per query of the tile: [head_dim]
  };
  std::vector<Item> items;
  std::vector<Thread> threads;
};

// out: [n_tokens][n_heads][head_dim]. Work is split over (sequence, kv head,
// tile of query rows) and spread dynamically over the pool's threads.
// Throws db::Error (before any work starts) when a block table does not cover a
// query's position or names a block outside the cache.
// Uses the process-wide ISA level (util/cpu_features.h).
void paged_attention(const AttentionQueries& queries, const PagedKVLayer& kv, float* out, AttentionWorkspace& ws,
                     ThreadPool& pool);
// The same with an explicit ISA level (which must be supported), for tests.
void paged_attention_isa(IsaLevel level, const AttentionQueries& queries, const PagedKVLayer& kv, float* out,
                         AttentionWorkspace& ws, ThreadPool& pool);

}  // namespace db::kernels

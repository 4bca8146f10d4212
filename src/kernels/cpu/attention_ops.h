// The per-ISA inner loops of paged attention. A tile kernel computes one work
// item over one span of keys: query rows [row_begin, row_end) of one sequence
// with the query heads of kv heads [kv_begin, kv_end), folding the keys of
// positions [span_begin, span_end) into an online softmax 16 positions at a
// time (chunk c covers positions [16c, 16c + 16), whatever the block size),
// from a fresh state, and writing each query's span record (attention_spans.h).
//
// Contract for every tile kernel: a query's record depends only on its vector,
// its position and the cached K/V of positions [span_begin, min(position + 1,
// span_end)) (never on the other queries of the tile or of the chunk). A query
// that reaches no key of the span gets a record the merge ignores.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/attention.h"
#include "kernels/cpu/softmax.h"
#include "tensor/dtype.h"
#include "tensor/kv_row_bytes.h"
#include "util/cpu_features.h"

namespace db::kernels {

constexpr int kKeysPerChunk = 16;

// One work item with everything a tile kernel reads and writes.
struct AttentionTile {
  const AttentionQueries* qs;
  const PagedKVLayer* kv;
  AttentionWorkspace::Item item;
  float* scratch;  // 64-byte aligned, tile_scratch_floats(rows, kv heads, group, k_head_dim, v_head_dim) floats
  int32_t* index;  // 2 * rows * kv heads * group integers
  float* records;  // span_record_floats(v_head_dim) per query of the item, in item order
};

// Floats past a tile's per-query arrays: up to 8 queries' 16 weights of a chunk.
constexpr size_t kTileBlockFloats = 128;

// Floats of scratch a tile of `rows` query rows, `kv_heads` kv heads with
// `group` query heads each, key width dk and value width dv may use; every
// kernel's layout fits in it: a chunk's keys twice (rows and transposed) and
// its values, and per query its padded vector, accumulator and softmax state.
inline size_t tile_scratch_floats(int rows, int kv_heads, int group, int dk, int dv) {
  const size_t kpad = (static_cast<size_t>(dk) + 15) / 16 * 16, vpad = (static_cast<size_t>(dv) + 15) / 16 * 16;
  const size_t n_q = static_cast<size_t>(rows) * static_cast<size_t>(kv_heads) * static_cast<size_t>(group);
  return kKeysPerChunk * (2 * kpad + vpad) + n_q * (kpad + vpad + 32) + kTileBlockFloats;
}

// The first element of kv head `head` at `slot` in an array whose slots are
// row_stride elements apart and whose heads are head_dim wide (PagedKVLayer).
inline int64_t kv_cache_offset(int64_t slot, int64_t row_stride, int head, int head_dim) {
  return slot * row_stride + int64_t{head} * head_dim;
}

// The byte of the array holding that first element (Q8_0: the start of its
// 32-element block, whose scale comes first), for many slots: the dtype's
// sizes (out of line) are looked up once, not once per row of a chunk.
struct KvHeadBytes {
  int64_t row_bytes;    // bytes from one slot to the next
  int64_t head_offset;  // bytes from a slot's first byte to the head's
  KvHeadBytes(DType dtype, int64_t row_stride, int head, int head_dim)
      : row_bytes(static_cast<int64_t>(kv_row_bytes(dtype, row_stride))),
        head_offset(int64_t{head} * head_dim / block_size(dtype) * static_cast<int64_t>(block_bytes(dtype))) {}
  int64_t at(int64_t slot) const { return slot * row_bytes + head_offset; }
};

// slots[r] = cache slot of position first + r (r < n) through a block table.
inline void chunk_slots(const std::vector<int32_t>& table, int block_size, int32_t first, int n, int64_t* slots) {
  size_t block = static_cast<size_t>(first / block_size);
  int offset = first % block_size;
  for (int r = 0; r < n; ++r) {
    slots[r] = static_cast<int64_t>(table[block]) * block_size + offset;
    if (++offset == block_size) offset = 0, ++block;
  }
}

// Asks for the cache lines of kv heads [h0, h0 + n_heads) of K and V for
// positions [first, first + n) of a sequence with block table `table` (no
// effect on results; n <= kKeysPerChunk).
void prefetch_kv_chunk(const AttentionQueries& qs, const PagedKVLayer& kv, const std::vector<int32_t>& table, int h0,
                       int n_heads, int32_t first, int n);

// The four per-query loops serve attention_tile_by_query(); a level with its
// own tile kernel may leave them null.
struct AttentionOps {
  // dst[r][0..d) = head `head` (d elements wide) of cache slot slots[r], r < n_rows, as f32;
  // slots are row_stride elements apart (kv_row_bytes(dtype, row_stride) bytes).
  void (*load_rows)(const void* base, DType dtype, const int64_t* slots, int n_rows, int64_t row_stride, int head,
                    int d, float* dst);
  // scores[j] = scale * dot(q, keys[j]), j < n_keys; keys are n_keys rows of d floats.
  void (*scores)(const float* q, const float* keys, int n_keys, int d, float scale, float* scores);
  // acc = acc * correction + sum_j weights[j] * values[j], j < n_keys, in index order.
  void (*accumulate)(float* acc, float correction, const float* weights, const float* values, int n_keys, int d);
  // online_softmax_update() (kernels/cpu/softmax.h), possibly vectorized.
  float (*softmax_update)(OnlineSoftmax& state, float* scores, int64_t n);
  // Computes one tile; `self` is this struct.
  void (*tile)(const AttentionOps& self, const AttentionTile& tile);
  // dst[0..n) = src[0..n) as dtype (F32, F16 or BF16, round to nearest even;
  // Q8_0, kv_row_bytes(Q8_0, n) bytes by GGML's reference quantizer): a new K
  // or V row for the cache. The same bytes at every level.
  void (*store_row)(const float* src, int64_t n, DType dtype, uint8_t* dst);
};

// The portable store_row (the scalar level's; the vector levels' for BF16 and F32).
void store_row_scalar(const float* src, int64_t n, DType dtype, uint8_t* dst);

// The tile kernel built from self's load_rows / scores / softmax_update /
// accumulate, one query at a time (attention.cpp).
void attention_tile_by_query(const AttentionOps& self, const AttentionTile& tile);

// The AVX2 level's tile kernel (x86/attention_ops_avx2_tile.cpp); requires
// AVX2 + FMA + F16C and ignores self.
void attention_tile_avx2(const AttentionOps& self, const AttentionTile& tile);
// The AVX2 level's store_row: F16 rows 8 values per vcvtps2ph (F16C), other
// dtypes by store_row_scalar.
void store_row_avx2(const float* src, int64_t n, DType dtype, uint8_t* dst);

const AttentionOps& attention_ops_scalar();
const AttentionOps& attention_ops_avx2();    // requires AVX2 + FMA + F16C
const AttentionOps& attention_ops_avx512();  // requires AVX-512 F/BW/VL (x86-64 builds only)
// The implementation for `level` (AVX-512 serves both AVX-512 levels).
const AttentionOps& attention_ops(IsaLevel level);

}  // namespace db::kernels

// What one KV block costs in memory: a model's KVCacheShape in a dtype, in
// blocks of block_size tokens. The block pool and the cache manager never see
// bytes; only the pool size is derived from this.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kvcache/kv_cache_shape.h"
#include "tensor/dtype.h"

namespace db {

struct KVCacheSpec {
  KVCacheShape shape;
  int32_t block_size = 16;    // tokens per block
  DType dtype = DType::F16;  // element type of the cache

  // shape.bytes_per_token(dtype); throws db::Error for an invalid shape or dtype.
  size_t bytes_per_token() const { return shape.bytes_per_token(dtype); }
  // Bytes one block takes over all layers (K and V, or the latent rows).
  size_t bytes_per_block() const;
};

// Blocks that fit in memory_budget_bytes, the null block included, capped at
// INT32_MAX. Throws db::Error when fewer than 2 fit (naming the layout) or the
// spec is invalid.
int32_t num_blocks_for_budget(const KVCacheSpec& spec, size_t memory_budget_bytes);

}  // namespace db

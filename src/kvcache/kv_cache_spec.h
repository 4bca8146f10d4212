// What one KV block costs in memory, per attention kind. The block pool and the
// cache manager never see bytes; only the pool size is derived from this.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace db {

struct KVCacheSpec {
  int32_t block_size = 16;     // tokens per block
  size_t bytes_per_block = 0;  // bytes one block takes over all layers
  std::string kind;            // "standard" (K and V per kv head) or "mla" (one compressed latent + rope key)
};

// Standard attention: K and V of n_kv_heads x head_dim per token and layer.
KVCacheSpec standard_kv_spec(int32_t n_layers, int32_t n_kv_heads, int32_t head_dim, int32_t block_size,
                             size_t element_bytes);
// MLA: one latent of (kv_lora_rank + rope_head_dim) per token and layer.
KVCacheSpec mla_kv_spec(int32_t n_layers, int32_t kv_lora_rank, int32_t rope_head_dim, int32_t block_size,
                        size_t element_bytes);

// Blocks that fit in memory_budget_bytes, the null block included, capped at
// INT32_MAX. Throws db::Error when fewer than 2 fit or the spec is invalid.
int32_t num_blocks_for_budget(const KVCacheSpec& spec, size_t memory_budget_bytes);

}  // namespace db

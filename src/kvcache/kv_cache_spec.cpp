#include "kvcache/kv_cache_spec.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace db {

namespace {
void check_positive(int32_t v, const char* what) {
  if (v <= 0) throw Error(std::string("KV cache spec: ") + what + " must be positive, got " + std::to_string(v));
}
}  // namespace

KVCacheSpec standard_kv_spec(int32_t n_layers, int32_t n_kv_heads, int32_t head_dim, int32_t block_size,
                             size_t element_bytes) {
  check_positive(n_layers, "layer count");
  check_positive(n_kv_heads, "kv head count");
  check_positive(head_dim, "head dim");
  check_positive(block_size, "block size");
  const size_t per_token = 2 * size_t(n_layers) * size_t(n_kv_heads) * size_t(head_dim) * element_bytes;
  return KVCacheSpec{block_size, per_token * size_t(block_size), "standard"};
}

KVCacheSpec mla_kv_spec(int32_t n_layers, int32_t kv_lora_rank, int32_t rope_head_dim, int32_t block_size,
                        size_t element_bytes) {
  check_positive(n_layers, "layer count");
  check_positive(kv_lora_rank, "kv lora rank");
  check_positive(rope_head_dim, "rope head dim");
  check_positive(block_size, "block size");
  const size_t per_token = size_t(n_layers) * (size_t(kv_lora_rank) + size_t(rope_head_dim)) * element_bytes;
  return KVCacheSpec{block_size, per_token * size_t(block_size), "mla"};
}

int32_t num_blocks_for_budget(const KVCacheSpec& spec, size_t memory_budget_bytes) {
  if (spec.block_size <= 0 || spec.bytes_per_block == 0)
    throw Error("KV cache spec (" + spec.kind + ") has block size " + std::to_string(spec.block_size) + " and " +
                std::to_string(spec.bytes_per_block) + " bytes per block; both must be positive");
  const size_t fit = memory_budget_bytes / spec.bytes_per_block;
  if (fit < 2)
    throw Error("KV cache memory " + std::to_string(memory_budget_bytes) + " bytes holds " + std::to_string(fit) +
                " block(s) of " + std::to_string(spec.bytes_per_block) + " bytes (" + spec.kind + ", " +
                std::to_string(spec.block_size) + " tokens); at least 2 are needed (" +
                std::to_string(2 * spec.bytes_per_block) + " bytes): raise --kv-cache-memory");
  return static_cast<int32_t>(std::min<size_t>(fit, std::numeric_limits<int32_t>::max()));
}

}  // namespace db

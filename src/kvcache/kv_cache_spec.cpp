#include "kvcache/kv_cache_spec.h"

#include <algorithm>
#include <limits>
#include <string>

#include "util/error.h"

namespace db {

size_t KVCacheSpec::bytes_per_block() const {
  if (block_size <= 0) throw Error("KV cache spec: block size must be positive, got " + std::to_string(block_size));
  return bytes_per_token() * static_cast<size_t>(block_size);
}

int32_t num_blocks_for_budget(const KVCacheSpec& spec, size_t memory_budget_bytes) {
  const size_t per_block = spec.bytes_per_block();
  const size_t fit = memory_budget_bytes / per_block;
  if (fit < 2)
    throw Error("KV cache memory " + std::to_string(memory_budget_bytes) + " bytes holds " + std::to_string(fit) +
                " block(s) of " + std::to_string(per_block) + " bytes (" + kv_layout_name(spec.shape.layout) +
                " layout, " + std::to_string(spec.block_size) + " tokens of " + std::to_string(spec.bytes_per_token()) +
                " bytes, " + dtype_name(spec.dtype) + "); at least 2 are needed (" + std::to_string(2 * per_block) +
                " bytes): --kv-cache-memory is too small, raise it");
  return static_cast<int32_t>(std::min<size_t>(fit, std::numeric_limits<int32_t>::max()));
}

}  // namespace db

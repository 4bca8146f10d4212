// Metadata of one KV cache block (the memory itself lives in KVStore, model/kv_store.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "kvcache/block_hash.h"

namespace db {

// Block 0: never handed out; block tables may use it as padding.
inline constexpr int32_t kNullBlockId = 0;

// Names one cached incarnation of a block: the id plus the epoch it was cached
// in. When the block is evicted and reused, links to its old incarnation go stale.
struct BlockLink {
  int32_t block_id = -1;  // -1: no block (the parent of a sequence's first block)
  uint64_t epoch = 0;     // KVBlock::cache_epoch at the time the link was taken
  friend bool operator==(const BlockLink&, const BlockLink&) = default;
};

struct KVBlock {
  int32_t id = 0;        // index into the pool and the KV store
  int32_t ref_cnt = 0;   // sequences holding the block; 0 = in the free queue (unless null)
  bool is_null = false;  // the null block: never allocated, never freed
  // Prefix-cache identity; set iff the block is full and registered in the hash map.
  std::optional<BlockHash> hash;
  uint64_t cache_epoch = 0;  // distinct for every registration; 0 = never cached
  BlockLink parent;          // the cached block holding the previous tokens of the sequence (when hash is set)
  std::string extra_keys;    // BlockExtraKeys::bytes the block was cached with (when hash is set)
  // Intrusive free-queue links, owned by FreeBlockQueue; null while the block is not queued.
  KVBlock* prev_free = nullptr;
  KVBlock* next_free = nullptr;
};

}  // namespace db

// Owns the KV blocks' metadata: reference counts, the free queue (LRU eviction
// order) and the prefix-cache hash map from block hash to cached full blocks.
//
// A block is always in exactly one of these states:
//   null block (id 0)       never allocated, freed or cached
//   ref_cnt > 0             held by sequences; not in the free queue
//   ref_cnt == 0            in the free queue; if cached (hash set) it can still be
//                           hit and taken back by touch(), until get_new_blocks()
//                           pops it and evicts its hash
//
// Resident blocks: the KV store's memory is committed by the OS as blocks are
// first written, so the blocks ever handed out are the pool's resident memory.
// Fresh blocks leave the free queue's head in id order and freed blocks join its
// tail, so the never-used blocks are always the ids [next_untouched, num_blocks),
// queued first. A fresh-block allowance (the memory guard's bound on KV memory
// growth until its next reading) limits how many of them get_new_blocks() may
// take: never-used blocks first while it lasts (they keep the prefix cache),
// then used ones. An exempt allocation (a sequence running alone, which must
// always progress) takes used blocks first and never-used ones past the allowance.
//
// A cached block is verified on every hit: the hash selects candidates, and a
// candidate only matches if its tokens, extra keys and parent link (the exact
// cached incarnation holding the previous tokens) are equal to the query's.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kvcache/block_hash.h"
#include "kvcache/free_block_queue.h"
#include "kvcache/kv_block.h"

namespace db {

// Monotonic prefix-cache counters (never reset, for metrics export).
struct PrefixCacheStats {
  uint64_t lookups = 0;         // prefix lookups made
  uint64_t query_tokens = 0;    // tokens offered to lookups
  uint64_t hit_tokens = 0;      // tokens found cached by lookups
  uint64_t evicted_blocks = 0;  // cached blocks whose hash was dropped to reuse the block
  double hit_rate() const { return query_tokens ? double(hit_tokens) / double(query_tokens) : 0.0; }
};

// Free-memory shape of the pool, computed on demand.
struct PoolFragmentation {
  int32_t num_usable_blocks = 0;     // all blocks except the null block
  int32_t num_free_blocks = 0;       // blocks in the free queue (cached ones included)
  int32_t num_cached_blocks = 0;     // blocks registered in the hash map (held or free)
  int32_t largest_free_run = 0;      // longest run of consecutive block ids that are all free
  int32_t num_resident_blocks = 0;   // blocks ever used (their memory is resident)
  double prefix_cache_hit_rate = 0;  // PrefixCacheStats::hit_rate()
};

// What a full block of a sequence must match to be reused.
struct CachedBlockQuery {
  BlockHash hash;                   // chained hash of the block
  std::span<const int32_t> tokens;  // its block_size tokens
  std::string_view extra_keys;      // BlockExtraKeys::bytes of the sequence
  BlockLink parent;                 // link to the block matched for the previous tokens; {} for the first block
};

class BlockPool {
 public:
  // num_blocks includes the null block (>= 2). Without caching, nothing is ever
  // registered or hit.
  BlockPool(int32_t num_blocks, int32_t block_size, bool enable_caching);
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  int32_t num_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t block_size() const { return block_size_; }
  bool caching_enabled() const { return enable_caching_; }
  const KVBlock& block(int32_t id) const;

  // Takes n free blocks (evicting any cached one from the hash map) and gives each
  // ref_cnt 1: from the head of the free queue, within the fresh-block allowance
  // (see above). n must be <= num_allocatable_blocks(exempt).
  std::vector<int32_t> get_new_blocks(int32_t n, bool exempt = false);

  // The cached block matching `query` exactly, or nullptr.
  const KVBlock* get_cached_block(const CachedBlockQuery& query) const;
  // The link naming a cached block's current incarnation (block must be cached).
  BlockLink link_of(int32_t block_id) const;
  // Whether `link` still names a cached incarnation.
  bool is_live(const BlockLink& link) const;

  // Registers the sequence's blocks [num_cached, num_full) as full cached blocks.
  // block_ids: the sequence's block table; hashes: at least num_full block hashes;
  // tokens: at least num_full * block_size token ids. Blocks [0, num_cached) must
  // already be cached. A block that is already cached (shared) is left as is.
  void cache_full_blocks(std::span<const int32_t> block_ids, std::span<const BlockHash> hashes,
                         std::span<const int32_t> tokens, std::string_view extra_keys, int32_t num_cached,
                         int32_t num_full);

  // ref_cnt++ for each block, taking a free (ref 0) one out of the free queue.
  void touch(std::span<const int32_t> block_ids);
  // ref_cnt-- for each block in order; blocks reaching 0 join the free queue in
  // that order (pass a sequence's blocks tail first so tails are evicted first).
  void free_blocks(std::span<const int32_t> ordered_block_ids);

  int32_t num_free_blocks() const { return free_queue_.size(); }
  // Free blocks get_new_blocks(n, exempt) may hand out: the used free ones plus
  // the never-used ones the allowance covers (all of them when exempt or unlimited).
  int32_t num_allocatable_blocks(bool exempt = false) const;
  // Blocks ever handed out (their memory is resident), and blocks never used.
  int32_t num_resident_blocks() const { return next_untouched_ - 1; }
  int32_t num_untouched_blocks() const { return num_blocks() - next_untouched_; }
  // Never-used blocks get_new_blocks() may still take (-1: no limit).
  void set_fresh_block_allowance(int64_t blocks) { fresh_allowance_ = blocks < 0 ? -1 : blocks; }
  int64_t fresh_block_allowance() const { return fresh_allowance_; }
  // Fraction of usable blocks held by sequences, in [0, 1].
  double usage() const;
  // Free queue order, next-to-evict first.
  std::vector<int32_t> free_queue_ids() const { return free_queue_.ids(); }

  // Drops every cached hash. Only possible when no block is held; returns false
  // (and changes nothing) otherwise. Stats are kept.
  bool reset_prefix_cache();

  void record_lookup(uint64_t query_tokens, uint64_t hit_tokens);
  const PrefixCacheStats& stats() const { return stats_; }
  int32_t num_cached_blocks() const { return static_cast<int32_t>(cached_.size()); }
  PoolFragmentation fragmentation() const;

 private:
  KVBlock& mutable_block(int32_t id);
  bool matches(const KVBlock& b, const CachedBlockQuery& q) const;
  void register_block(KVBlock& b, const CachedBlockQuery& q);
  void evict(KVBlock& b);

  int32_t block_size_;
  bool enable_caching_;
  std::vector<KVBlock> blocks_;        // index = block id; never resized
  std::vector<int32_t> block_tokens_;  // [num_blocks][block_size] tokens of cached blocks (caching only)
  FreeBlockQueue free_queue_;
  std::unordered_multimap<uint64_t, int32_t> cached_;  // hash -> cached block ids
  uint64_t next_epoch_ = 1;
  PrefixCacheStats stats_;
  int32_t next_untouched_ = 1;  // the lowest never-used block id (block 0 is the null block)
  int64_t fresh_allowance_ = -1;  // never-used blocks get_new_blocks() may take; -1 = no limit
};

}  // namespace db

// Per-request KV blocks on top of the BlockPool: prefix-cache lookup, slot
// allocation with copy-on-write for forked sequences, and release.
//
// A request's life (the request itself lives in the scheduler; the manager only
// keeps its block table, the hashes of its full blocks and its extra keys):
//
//   hit = get_computed_blocks(id, prompt, extra)          // no side effects but stats
//   allocate_slots(id, {tokens, 0, n, ..., &hit, &extra}) // adopts hit, allocates, caches
//   ... each step: allocate_slots(id, {tokens, computed, n}) -> nullopt = does not fit
//   fork(id, child)                                       // n > 1 samples / beams
//   free(id)                                              // tail first
//
// Slots of one allocate_slots call (block size 4; computed 6, new 6, lookahead 2):
//
//   position  0 1 2 3 | 4 5 6 7 | 8 9 10 11 | 12 13
//   table     b0      | b1      | b2        | b3
//             c c c c | c c n n | n n n  n  | l  l
//
//   c: KV present (num_computed_tokens, plus the adopted hit on the first call)
//   n: written by this step; l: reserved lookahead slots
//   The first written row is row 2 of b1; the table grows to cover every slot.
//
// Copy-on-write: a held block the step writes into that another sequence also
// holds (ref_cnt > 1, only possible after fork) is replaced by a new block. If
// the replaced block holds rows this request still needs (it is the block of
// the first written row and that row is not row 0), the result lists the copy
// {src, dst}; the runner must copy the whole src block to dst in every layer of
// the KVStore BEFORE the step writes any KV:
//
//   parent: [ 7 ][ 8 ][ 9: rows 0-1 ]   fork -> child: [ 7 ][ 8 ][ 9 ]  (7, 8, 9 at ref 2)
//   child.allocate_slots(computed 10, new 1) -> child: [ 7 ][ 8 ][ 12 ]
//       AllocResult{ new_blocks = {12}, copies = {{9, 12}} }        (9 back at ref 1)
//   parent.allocate_slots(computed 10, new 1) -> writes in place into 9, no copy
//
// Blocks become cached as soon as allocate_slots hands out slots for their last
// token, so a request admitted later in the same step may reuse them. The runner
// must therefore write every new token's KV of a layer before any sequence's
// attention reads that layer (the flat batch already does).
//
// Prefix hits cover full blocks only and at most tokens.size() - 1 tokens, so at
// least one token is computed and yields logits: when a whole prompt of an exact
// multiple of the block size is cached, its last block is computed again.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvcache/block_copy.h"
#include "kvcache/block_hash.h"
#include "kvcache/block_pool.h"
#include "util/request_id.h"

namespace db {

// A prefix-cache hit for a request that holds no blocks yet. The blocks are not
// held: pass it to allocate_slots before anything else allocates.
struct ComputedBlocks {
  std::vector<int32_t> block_ids;   // cached blocks holding the first num_computed_tokens tokens, in order
  std::vector<BlockHash> hashes;    // their chained hashes
  std::vector<BlockLink> links;     // their cached incarnations (checked again when adopted)
  int32_t num_computed_tokens = 0;  // block_ids.size() * block_size
};

// One allocate_slots call.
struct SlotRequest {
  std::span<const int32_t> tokens;   // known token ids (prompt + accepted output); full blocks cached from these
  int32_t num_computed_tokens = 0;   // tokens whose KV the request's blocks hold already (0 on the first call)
  int32_t num_new_tokens = 0;        // tokens the step computes, right after the computed ones (and the hit)
  int32_t num_lookahead_tokens = 0;  // extra slots after those (speculative drafts); never cached
  const ComputedBlocks* prefix_hit = nullptr;  // first call only: the hit to adopt
  const BlockExtraKeys* extra_keys = nullptr;  // first call only: the request's extra keys (null = none)
  int32_t reserve_blocks = 0;        // allocatable blocks that must stay free afterwards (kept for other classes)
  bool exempt = false;               // may pass the fresh-block allowance (see BlockPool): a lone sequence
};

struct AllocResult {
  std::vector<int32_t> new_blocks;  // blocks this call took from the pool (copy-on-write ones first, then appended)
  std::vector<BlockCopy> copies;    // copies the runner performs before the step (see the diagram above)
};

class KVCacheManager {
 public:
  // num_blocks includes the null block. hash_fn is replaceable for tests.
  KVCacheManager(int32_t block_size, int32_t num_blocks, bool enable_prefix_caching,
                 BlockHashFn hash_fn = xxh3_block_hash);

  // The longest run of cached full blocks that starts the sequence `tokens`,
  // capped at tokens.size() - 1 tokens. The request must hold no blocks. Counts
  // one lookup in the stats (each call counts).
  ComputedBlocks get_computed_blocks(RequestId id, std::span<const int32_t> tokens,
                                     const BlockExtraKeys& extra_keys = {});

  // Makes room for r.num_new_tokens + r.num_lookahead_tokens more tokens, first
  // adopting r.prefix_hit. nullopt when the pool lacks free blocks (beyond
  // r.reserve_blocks, see BlockPool::num_allocatable_blocks): then nothing
  // changed (no partial allocation). On success, caches every block that became
  // full with the tokens up to min(computed + new, tokens.size()).
  std::optional<AllocResult> allocate_slots(RequestId id, const SlotRequest& r);

  // Releases the request's blocks, tail first. Returns false for an unknown id.
  bool free(RequestId id);

  // The child shares every block of the parent (ref_cnt++); the child must be new.
  void fork(RequestId parent, RequestId child);

  bool has_request(RequestId id) const { return requests_.count(id) != 0; }
  // The request's block ids in position order; the request must exist.
  const std::vector<int32_t>& block_table(RequestId id) const;

  int32_t block_size() const { return pool_.block_size(); }
  int32_t num_free_blocks() const { return pool_.num_free_blocks(); }
  int32_t num_allocatable_blocks(bool exempt = false) const { return pool_.num_allocatable_blocks(exempt); }
  // See BlockPool: never-used blocks (new resident memory) allocation may still take; -1 = no limit.
  void set_fresh_block_allowance(int64_t blocks) { pool_.set_fresh_block_allowance(blocks); }
  double usage() const { return pool_.usage(); }
  const PrefixCacheStats& prefix_cache_stats() const { return pool_.stats(); }
  PoolFragmentation fragmentation() const { return pool_.fragmentation(); }
  // See BlockPool::reset_prefix_cache (only when no request holds blocks).
  bool reset_prefix_cache() { return pool_.reset_prefix_cache(); }
  const BlockPool& pool() const { return pool_; }

 private:
  struct RequestBlocks {
    std::vector<int32_t> block_ids;  // block table, position order
    std::vector<BlockHash> hashes;   // hashes of the leading full blocks computed so far
    int32_t num_cached_blocks = 0;   // leading blocks registered in (or taken from) the prefix cache
    std::string extra_keys;          // BlockExtraKeys::bytes
  };
  struct AllocPlan;

  AllocPlan plan(const RequestBlocks* state, const SlotRequest& r) const;
  void cache_blocks(RequestBlocks& state, std::span<const int32_t> tokens, int64_t num_tokens);

  BlockPool pool_;
  BlockHashFn hash_fn_;
  std::unordered_map<RequestId, RequestBlocks> requests_;
};

}  // namespace db

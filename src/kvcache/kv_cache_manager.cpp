#include "kvcache/kv_cache_manager.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace db {

namespace {
const ComputedBlocks kNoHit;
const std::vector<int32_t> kNoBlocks;
}  // namespace

// What one allocate_slots call needs, worked out before anything changes.
struct KVCacheManager::AllocPlan {
  int64_t computed = 0;               // tokens with KV after adopting the hit
  int32_t grow = 0;                   // blocks to append to the table
  std::vector<size_t> copy_on_write;  // table indices of shared blocks the step writes into
  int32_t hit_blocks_to_unfree = 0;   // hit blocks at ref_cnt 0, leaving the free queue when adopted
  int32_t blocks_needed() const { return grow + static_cast<int32_t>(copy_on_write.size()) + hit_blocks_to_unfree; }
};

KVCacheManager::KVCacheManager(int32_t block_size, int32_t num_blocks, bool enable_prefix_caching, BlockHashFn hash_fn)
    : pool_(num_blocks, block_size, enable_prefix_caching), hash_fn_(hash_fn) {
  DB_CHECK(hash_fn != nullptr, "a block hash function is required");
}

ComputedBlocks KVCacheManager::get_computed_blocks(RequestId id, std::span<const int32_t> tokens,
                                                   const BlockExtraKeys& extra_keys) {
  DB_CHECK(!has_request(id), "request " + std::to_string(id) + " already holds blocks; look up its prefix only once");
  ComputedBlocks hit;
  if (!pool_.caching_enabled() || tokens.empty()) return hit;
  const size_t bs = static_cast<size_t>(block_size());
  const size_t max_blocks = (tokens.size() - 1) / bs;
  BlockHash parent_hash = kRootBlockHash;
  BlockLink parent_link;
  for (size_t i = 0; i < max_blocks; ++i) {
    CachedBlockQuery q;
    q.tokens = tokens.subspan(i * bs, bs);
    q.hash = hash_fn_(parent_hash, q.tokens, extra_keys.bytes);
    q.extra_keys = extra_keys.bytes;
    q.parent = parent_link;
    const KVBlock* b = pool_.get_cached_block(q);
    if (!b) break;
    parent_hash = q.hash;
    parent_link = pool_.link_of(b->id);
    hit.block_ids.push_back(b->id);
    hit.hashes.push_back(q.hash);
    hit.links.push_back(parent_link);
  }
  hit.num_computed_tokens = static_cast<int32_t>(hit.block_ids.size() * bs);
  pool_.record_lookup(tokens.size(), static_cast<uint64_t>(hit.num_computed_tokens));
  return hit;
}

KVCacheManager::AllocPlan KVCacheManager::plan(const RequestBlocks* state, const SlotRequest& r) const {
  const ComputedBlocks& hit = r.prefix_hit ? *r.prefix_hit : kNoHit;
  const std::vector<int32_t>& table = state ? state->block_ids : kNoBlocks;
  const int64_t bs = block_size();
  DB_CHECK(r.num_computed_tokens >= 0 && r.num_new_tokens >= 0 && r.num_lookahead_tokens >= 0,
           "allocate_slots: token counts must not be negative");
  DB_CHECK(!state || hit.block_ids.empty(), "a prefix hit can only be adopted by a request's first allocation");
  DB_CHECK(state || r.num_computed_tokens == 0, "a request's first allocation starts with 0 computed tokens");
  DB_CHECK(hit.block_ids.size() == hit.hashes.size() && hit.block_ids.size() == hit.links.size() &&
               int64_t(hit.num_computed_tokens) == int64_t(hit.block_ids.size()) * bs,
           "malformed prefix hit");
  for (const BlockLink& link : hit.links)
    DB_CHECK(pool_.is_live(link), "prefix-hit block " + std::to_string(link.block_id) +
                                      " was evicted between get_computed_blocks and allocate_slots");

  AllocPlan p;
  p.computed = int64_t(r.num_computed_tokens) + hit.num_computed_tokens;
  DB_CHECK(p.computed <= int64_t(table.size() + hit.block_ids.size()) * bs,
           "allocate_slots: " + std::to_string(p.computed) + " computed tokens exceed the request's blocks");
  DB_CHECK(p.computed <= int64_t(r.tokens.size()), "allocate_slots: more computed tokens than known tokens");
  const int64_t total = p.computed + r.num_new_tokens + r.num_lookahead_tokens;
  const int64_t have = int64_t(table.size() + hit.block_ids.size());
  p.grow = static_cast<int32_t>(std::max<int64_t>(0, (total + bs - 1) / bs - have));
  for (int32_t id : hit.block_ids)
    if (pool_.block(id).ref_cnt == 0) ++p.hit_blocks_to_unfree;
  if (total > p.computed) {
    const size_t first = static_cast<size_t>(p.computed / bs);
    const size_t last = std::min(table.size(), static_cast<size_t>((total - 1) / bs) + 1);
    for (size_t j = first; j < last; ++j) {
      const KVBlock& b = pool_.block(table[j]);
      DB_CHECK(!b.hash, "allocate_slots would write into cached block " + std::to_string(b.id) +
                            "; num_computed_tokens is behind the tokens already cached");
      if (b.ref_cnt > 1) p.copy_on_write.push_back(j);
    }
  }
  return p;
}

std::optional<AllocResult> KVCacheManager::allocate_slots(RequestId id, const SlotRequest& r) {
  auto it = requests_.find(id);
  RequestBlocks* state = it == requests_.end() ? nullptr : &it->second;
  const AllocPlan p = plan(state, r);
  const int32_t needed = p.blocks_needed();
  if (needed > 0 && int64_t(needed) + std::max(r.reserve_blocks, 0) > pool_.num_allocatable_blocks(r.exempt))
    return std::nullopt;

  if (!state) {
    state = &requests_[id];
    if (r.extra_keys) state->extra_keys = r.extra_keys->bytes;
  }
  if (r.prefix_hit && !r.prefix_hit->block_ids.empty()) {
    pool_.touch(r.prefix_hit->block_ids);
    state->block_ids = r.prefix_hit->block_ids;
    state->hashes = r.prefix_hit->hashes;
    state->num_cached_blocks = static_cast<int32_t>(state->block_ids.size());
  }
  AllocResult result;
  const int64_t bs = block_size();
  for (size_t j : p.copy_on_write) {
    const int32_t shared = state->block_ids[j];
    const int32_t fresh = pool_.get_new_blocks(1, r.exempt).front();
    if (j == static_cast<size_t>(p.computed / bs) && p.computed % bs != 0) result.copies.push_back({shared, fresh});
    const int32_t release[] = {shared};
    pool_.free_blocks(release);
    state->block_ids[j] = fresh;
    result.new_blocks.push_back(fresh);
  }
  for (int32_t fresh : pool_.get_new_blocks(p.grow, r.exempt)) {
    state->block_ids.push_back(fresh);
    result.new_blocks.push_back(fresh);
  }
  cache_blocks(*state, r.tokens, std::min<int64_t>(p.computed + r.num_new_tokens, int64_t(r.tokens.size())));
  return result;
}

void KVCacheManager::cache_blocks(RequestBlocks& state, std::span<const int32_t> tokens, int64_t num_tokens) {
  if (!pool_.caching_enabled()) return;
  const int32_t num_full = static_cast<int32_t>(num_tokens / block_size());
  if (num_full <= state.num_cached_blocks) return;
  extend_block_hashes(state.hashes, tokens.first(static_cast<size_t>(num_full) * size_t(block_size())), block_size(),
                      state.extra_keys, hash_fn_);
  pool_.cache_full_blocks(state.block_ids, state.hashes, tokens, state.extra_keys, state.num_cached_blocks, num_full);
  state.num_cached_blocks = num_full;
}

bool KVCacheManager::free(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return false;
  std::vector<int32_t> tail_first(it->second.block_ids.rbegin(), it->second.block_ids.rend());
  requests_.erase(it);
  pool_.free_blocks(tail_first);
  return true;
}

void KVCacheManager::fork(RequestId parent, RequestId child) {
  auto it = requests_.find(parent);
  DB_CHECK(it != requests_.end(), "fork: unknown parent request " + std::to_string(parent));
  DB_CHECK(!has_request(child), "fork: request " + std::to_string(child) + " already exists");
  RequestBlocks copy = it->second;
  pool_.touch(copy.block_ids);
  requests_.emplace(child, std::move(copy));
}

const std::vector<int32_t>& KVCacheManager::block_table(RequestId id) const {
  auto it = requests_.find(id);
  DB_CHECK(it != requests_.end(), "unknown request " + std::to_string(id));
  return it->second.block_ids;
}

}  // namespace db

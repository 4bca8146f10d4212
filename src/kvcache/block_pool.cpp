#include "kvcache/block_pool.h"

#include <algorithm>
#include <string>

#include "util/error.h"

namespace db {

namespace {
std::vector<KVBlock> make_blocks(int32_t num_blocks) {
  if (num_blocks < 2)
    throw Error("the KV block pool needs at least 2 blocks (the null block and one usable), got " +
                std::to_string(num_blocks) + "; raise the KV cache memory");
  std::vector<KVBlock> blocks(static_cast<size_t>(num_blocks));
  for (int32_t i = 0; i < num_blocks; ++i) blocks[static_cast<size_t>(i)].id = i;
  return blocks;
}
}  // namespace

BlockPool::BlockPool(int32_t num_blocks, int32_t block_size, bool enable_caching)
    : block_size_(block_size), enable_caching_(enable_caching), blocks_(make_blocks(num_blocks)), free_queue_(blocks_) {
  if (block_size <= 0) throw Error("KV block size must be positive, got " + std::to_string(block_size));
  if (enable_caching) block_tokens_.resize(static_cast<size_t>(num_blocks) * static_cast<size_t>(block_size));
  KVBlock* null_block = free_queue_.popleft();
  DB_CHECK(null_block->id == kNullBlockId, "the null block must be block 0");
  null_block->is_null = true;
}

const KVBlock& BlockPool::block(int32_t id) const {
  DB_CHECK(id >= 0 && id < num_blocks(),
           "block id " + std::to_string(id) + " outside the pool of " + std::to_string(num_blocks()));
  return blocks_[static_cast<size_t>(id)];
}

KVBlock& BlockPool::mutable_block(int32_t id) { return const_cast<KVBlock&>(block(id)); }

int32_t BlockPool::num_allocatable_blocks(bool exempt) const {
  const int32_t fresh = num_untouched_blocks();
  if (exempt || fresh_allowance_ < 0) return num_free_blocks();
  return num_free_blocks() - fresh + static_cast<int32_t>(std::min<int64_t>(fresh, fresh_allowance_));
}

std::vector<int32_t> BlockPool::get_new_blocks(int32_t n, bool exempt) {
  DB_CHECK(n >= 0 && n <= num_allocatable_blocks(exempt),
           "cannot allocate " + std::to_string(n) + " blocks with " + std::to_string(num_allocatable_blocks(exempt)) +
               " allocatable");
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(n));
  std::vector<KVBlock*> taken;
  if (fresh_allowance_ < 0) {
    taken = free_queue_.popleft_n(n);
  } else {
    // Never-used blocks (the queue's head) within the allowance, then used ones,
    // then, for an exempt allocation, never-used ones past the allowance.
    const int32_t fresh = num_untouched_blocks(), used = num_free_blocks() - fresh;
    const int32_t first = static_cast<int32_t>(std::min<int64_t>({int64_t{n}, fresh, fresh_allowance_}));
    const int32_t second = std::min(n - first, used);
    taken = free_queue_.popleft_n(first);
    std::vector<KVBlock*> more = fresh > first ? free_queue_.pop_n_after(&blocks_.back(), second)
                                               : free_queue_.popleft_n(second);
    taken.insert(taken.end(), more.begin(), more.end());
    more = free_queue_.popleft_n(n - first - second);
    taken.insert(taken.end(), more.begin(), more.end());
  }
  for (KVBlock* b : taken) {
    DB_CHECK(b->ref_cnt == 0 && !b->is_null, "free queue held block " + std::to_string(b->id) + " in use");
    if (b->id >= next_untouched_) {
      DB_CHECK(b->id == next_untouched_, "never-used block " + std::to_string(b->id) + " left the free queue early");
      ++next_untouched_;
      if (fresh_allowance_ > 0) --fresh_allowance_;
    }
    if (b->hash) evict(*b);
    b->ref_cnt = 1;
    ids.push_back(b->id);
  }
  return ids;
}

bool BlockPool::matches(const KVBlock& b, const CachedBlockQuery& q) const {
  if (!b.hash || *b.hash != q.hash || b.parent != q.parent || b.extra_keys != q.extra_keys) return false;
  const int32_t* stored = block_tokens_.data() + static_cast<size_t>(b.id) * static_cast<size_t>(block_size_);
  return std::equal(q.tokens.begin(), q.tokens.end(), stored);
}

const KVBlock* BlockPool::get_cached_block(const CachedBlockQuery& q) const {
  if (!enable_caching_) return nullptr;
  DB_CHECK(q.tokens.size() == static_cast<size_t>(block_size_),
           "a cached block query needs exactly one block of tokens");
  auto [first, last] = cached_.equal_range(q.hash.value);
  for (auto it = first; it != last; ++it) {
    const KVBlock& b = blocks_[static_cast<size_t>(it->second)];
    if (matches(b, q)) return &b;
  }
  return nullptr;
}

BlockLink BlockPool::link_of(int32_t block_id) const {
  const KVBlock& b = block(block_id);
  DB_CHECK(b.hash.has_value(), "block " + std::to_string(block_id) + " is not cached");
  return BlockLink{b.id, b.cache_epoch};
}

bool BlockPool::is_live(const BlockLink& link) const {
  if (link.block_id < 0 || link.block_id >= num_blocks()) return false;
  const KVBlock& b = blocks_[static_cast<size_t>(link.block_id)];
  return b.hash.has_value() && b.cache_epoch == link.epoch;
}

void BlockPool::register_block(KVBlock& b, const CachedBlockQuery& q) {
  b.hash = q.hash;
  b.cache_epoch = next_epoch_++;
  b.parent = q.parent;
  b.extra_keys = std::string(q.extra_keys);
  std::copy(q.tokens.begin(), q.tokens.end(), block_tokens_.begin() + static_cast<std::ptrdiff_t>(b.id) * block_size_);
  cached_.emplace(q.hash.value, b.id);
}

void BlockPool::cache_full_blocks(std::span<const int32_t> block_ids, std::span<const BlockHash> hashes,
                                  std::span<const int32_t> tokens, std::string_view extra_keys, int32_t num_cached,
                                  int32_t num_full) {
  if (!enable_caching_ || num_full <= num_cached) return;
  DB_CHECK(num_cached >= 0 && static_cast<size_t>(num_full) <= block_ids.size() &&
               static_cast<size_t>(num_full) <= hashes.size() &&
               static_cast<size_t>(num_full) * static_cast<size_t>(block_size_) <= tokens.size(),
           "cache_full_blocks: " + std::to_string(num_full) + " full blocks exceed the blocks, hashes or tokens given");
  for (int32_t i = num_cached; i < num_full; ++i) {
    KVBlock& b = mutable_block(block_ids[static_cast<size_t>(i)]);
    DB_CHECK(b.ref_cnt > 0 && !b.is_null, "cannot cache block " + std::to_string(b.id) + " that is not held");
    if (b.hash) {
      DB_CHECK(*b.hash == hashes[static_cast<size_t>(i)],
               "block " + std::to_string(b.id) + " is already cached under another hash");
      continue;
    }
    CachedBlockQuery q;
    q.hash = hashes[static_cast<size_t>(i)];
    q.tokens =
        tokens.subspan(static_cast<size_t>(i) * static_cast<size_t>(block_size_), static_cast<size_t>(block_size_));
    q.extra_keys = extra_keys;
    if (i > 0) q.parent = link_of(block_ids[static_cast<size_t>(i) - 1]);
    register_block(b, q);
  }
}

void BlockPool::evict(KVBlock& b) {
  auto [first, last] = cached_.equal_range(b.hash->value);
  auto it = std::find_if(first, last, [&](const auto& entry) { return entry.second == b.id; });
  DB_CHECK(it != last, "cached block " + std::to_string(b.id) + " missing from the hash map");
  cached_.erase(it);
  b.hash.reset();
  b.parent = BlockLink{};
  b.extra_keys.clear();
  ++stats_.evicted_blocks;
}

void BlockPool::touch(std::span<const int32_t> block_ids) {
  for (int32_t id : block_ids) {
    KVBlock& b = mutable_block(id);
    DB_CHECK(!b.is_null, "the null block cannot be touched");
    if (b.ref_cnt == 0) free_queue_.remove(&b);
    ++b.ref_cnt;
  }
}

void BlockPool::free_blocks(std::span<const int32_t> ordered_block_ids) {
  for (int32_t id : ordered_block_ids) {
    KVBlock& b = mutable_block(id);
    DB_CHECK(!b.is_null && b.ref_cnt > 0, "block " + std::to_string(id) + " freed more often than held");
    if (--b.ref_cnt == 0) free_queue_.append(&b);
  }
}

double BlockPool::usage() const {
  const int32_t usable = num_blocks() - 1;
  return 1.0 - static_cast<double>(num_free_blocks()) / static_cast<double>(usable);
}

bool BlockPool::reset_prefix_cache() {
  if (num_free_blocks() != num_blocks() - 1) return false;
  cached_.clear();
  for (KVBlock& b : blocks_) {
    b.hash.reset();
    b.parent = BlockLink{};
    b.extra_keys.clear();
  }
  return true;
}

void BlockPool::record_lookup(uint64_t query_tokens, uint64_t hit_tokens) {
  ++stats_.lookups;
  stats_.query_tokens += query_tokens;
  stats_.hit_tokens += hit_tokens;
}

PoolFragmentation BlockPool::fragmentation() const {
  PoolFragmentation f;
  f.num_usable_blocks = num_blocks() - 1;
  f.num_free_blocks = num_free_blocks();
  f.num_cached_blocks = num_cached_blocks();
  f.prefix_cache_hit_rate = stats_.hit_rate();
  f.num_resident_blocks = num_resident_blocks();
  int32_t run = 0;
  for (const KVBlock& b : blocks_) {
    run = (!b.is_null && b.ref_cnt == 0) ? run + 1 : 0;
    f.largest_free_run = std::max(f.largest_free_run, run);
  }
  return f;
}

}  // namespace db

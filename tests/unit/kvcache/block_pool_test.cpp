#include "kvcache/block_pool.h"

#include <gtest/gtest.h>

#include "kv_test_util.h"
#include "util/error.h"

namespace db {
namespace {

using kvtest::Ids;
using kvtest::seq;

// Caches the blocks of `table` holding `tokens` (block size 4, no extra keys).
std::vector<BlockHash> cache(BlockPool& pool, const Ids& table, const std::vector<int32_t>& tokens) {
  std::vector<BlockHash> hashes;
  extend_block_hashes(hashes, tokens, pool.block_size(), "");
  pool.cache_full_blocks(table, hashes, tokens, "", 0, static_cast<int32_t>(hashes.size()));
  return hashes;
}

CachedBlockQuery query(BlockHash h, std::span<const int32_t> tokens, BlockLink parent = {}) {
  CachedBlockQuery q;
  q.hash = h;
  q.tokens = tokens;
  q.parent = parent;
  return q;
}

TEST(BlockPool, FreshPoolHandsOutIdsFromOneUpward) {
  BlockPool pool(8, 4, true);
  EXPECT_EQ(pool.num_free_blocks(), 7);
  EXPECT_TRUE(pool.block(kNullBlockId).is_null);
  EXPECT_EQ(pool.free_queue_ids(), (Ids{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(pool.get_new_blocks(3), (Ids{1, 2, 3}));
  EXPECT_EQ(pool.get_new_blocks(2), (Ids{4, 5}));
  for (int id = 1; id <= 5; ++id) EXPECT_EQ(pool.block(id).ref_cnt, 1);
  EXPECT_EQ(pool.num_free_blocks(), 2);
  EXPECT_THROW(pool.get_new_blocks(3), Error);
  EXPECT_EQ(pool.num_free_blocks(), 2);
}

TEST(BlockPool, FreedBlocksQueueInTheGivenOrder) {
  BlockPool pool(8, 4, false);
  const Ids a = pool.get_new_blocks(3);  // 1 2 3
  const Ids b = pool.get_new_blocks(2);  // 4 5
  pool.free_blocks(Ids(a.rbegin(), a.rend()));
  pool.free_blocks(Ids(b.rbegin(), b.rend()));
  EXPECT_EQ(pool.free_queue_ids(), (Ids{6, 7, 3, 2, 1, 5, 4}));
  EXPECT_EQ(pool.get_new_blocks(4), (Ids{6, 7, 3, 2}));
  EXPECT_THROW(pool.free_blocks(Ids{1}), Error);  // ref 0 already
  EXPECT_THROW(pool.free_blocks(Ids{kNullBlockId}), Error);
}

TEST(BlockPool, TouchTakesFreeBlocksOutOfTheQueue) {
  BlockPool pool(6, 4, true);
  const Ids a = pool.get_new_blocks(2);
  pool.free_blocks(Ids{2, 1});
  EXPECT_EQ(pool.free_queue_ids(), (Ids{3, 4, 5, 2, 1}));
  pool.touch(Ids{2});
  EXPECT_EQ(pool.block(2).ref_cnt, 1);
  EXPECT_EQ(pool.free_queue_ids(), (Ids{3, 4, 5, 1}));
  pool.touch(Ids{2});  // held: only the count moves
  EXPECT_EQ(pool.block(2).ref_cnt, 2);
  EXPECT_EQ(pool.num_free_blocks(), 4);
  EXPECT_THROW(pool.touch(Ids{kNullBlockId}), Error);
}

TEST(BlockPool, CachedBlocksAreVerifiedOnLookup) {
  BlockPool pool(8, 4, true);
  const auto tokens = seq(0, 8);
  const Ids table = pool.get_new_blocks(2);
  const auto h = cache(pool, table, tokens);
  EXPECT_EQ(pool.num_cached_blocks(), 2);

  const auto t0 = std::span(tokens).first(4), t1 = std::span(tokens).subspan(4, 4);
  const KVBlock* b1 = pool.get_cached_block(query(h[0], t0));
  ASSERT_NE(b1, nullptr);
  EXPECT_EQ(b1->id, 1);
  const KVBlock* b2 = pool.get_cached_block(query(h[1], t1, pool.link_of(1)));
  ASSERT_NE(b2, nullptr);
  EXPECT_EQ(b2->id, 2);
  EXPECT_EQ(b2->parent, pool.link_of(1));

  EXPECT_EQ(pool.get_cached_block(query(h[1], t1)), nullptr);                       // wrong parent
  EXPECT_EQ(pool.get_cached_block(query(h[0], t1)), nullptr);                       // wrong tokens
  EXPECT_EQ(pool.get_cached_block(query(BlockHash{h[0].value + 1}, t0)), nullptr);  // wrong hash
  CachedBlockQuery salted = query(h[0], t0);
  salted.extra_keys = "salt";
  EXPECT_EQ(pool.get_cached_block(salted), nullptr);  // wrong extra keys
}

TEST(BlockPool, GetNewBlocksEvictsCachedFreeBlocks) {
  BlockPool pool(4, 4, true);  // usable: 1 2 3
  const auto tokens = seq(0, 8);
  const Ids table = pool.get_new_blocks(2);
  const auto h = cache(pool, table, tokens);
  const BlockLink old_link = pool.link_of(1);
  pool.free_blocks(Ids{2, 1});
  EXPECT_EQ(pool.free_queue_ids(), (Ids{3, 2, 1}));
  EXPECT_EQ(pool.num_cached_blocks(), 2);  // free but still cached

  EXPECT_EQ(pool.get_new_blocks(2), (Ids{3, 2}));
  EXPECT_EQ(pool.stats().evicted_blocks, 1u);
  EXPECT_FALSE(pool.block(2).hash.has_value());
  EXPECT_EQ(pool.num_cached_blocks(), 1);
  EXPECT_EQ(pool.get_cached_block(query(h[1], std::span(tokens).subspan(4, 4), old_link)), nullptr);
  EXPECT_TRUE(pool.is_live(old_link));
  EXPECT_EQ(pool.get_new_blocks(1), (Ids{1}));
  EXPECT_FALSE(pool.is_live(old_link));
  EXPECT_EQ(pool.num_cached_blocks(), 0);
  EXPECT_EQ(pool.stats().evicted_blocks, 2u);
}

// Two different blocks under one hash value are both kept, and each lookup finds its own.
TEST(BlockPool, HashCollisionsNeverMatchOtherTokens) {
  BlockPool pool(8, 4, true);
  const auto ta = seq(0, 4), tb = seq(100, 4);
  const BlockHash same{42};
  const Ids a = pool.get_new_blocks(1), b = pool.get_new_blocks(1);
  pool.cache_full_blocks(a, std::vector<BlockHash>{same}, ta, "", 0, 1);
  pool.cache_full_blocks(b, std::vector<BlockHash>{same}, tb, "", 0, 1);
  EXPECT_EQ(pool.num_cached_blocks(), 2);
  EXPECT_EQ(pool.get_cached_block(query(same, ta))->id, 1);
  EXPECT_EQ(pool.get_cached_block(query(same, tb))->id, 2);
  EXPECT_EQ(pool.get_cached_block(query(same, seq(200, 4))), nullptr);
}

TEST(BlockPool, CachingDisabledNeverHits) {
  BlockPool pool(4, 4, false);
  const auto tokens = seq(0, 4);
  const Ids table = pool.get_new_blocks(1);
  const auto h = cache(pool, table, tokens);
  EXPECT_EQ(pool.num_cached_blocks(), 0);
  EXPECT_EQ(pool.get_cached_block(query(h[0], tokens)), nullptr);
}

TEST(BlockPool, UsageAndFragmentation) {
  BlockPool pool(11, 4, true);  // usable: 1..10
  EXPECT_DOUBLE_EQ(pool.usage(), 0.0);
  EXPECT_EQ(pool.fragmentation().largest_free_run, 10);
  const Ids all = pool.get_new_blocks(10);
  EXPECT_DOUBLE_EQ(pool.usage(), 1.0);
  EXPECT_EQ(pool.fragmentation().largest_free_run, 0);
  pool.free_blocks(Ids{5, 4, 3});
  pool.free_blocks(Ids{8});
  const PoolFragmentation f = pool.fragmentation();
  EXPECT_EQ(f.num_usable_blocks, 10);
  EXPECT_EQ(f.num_free_blocks, 4);
  EXPECT_EQ(f.largest_free_run, 3);
  EXPECT_EQ(f.num_cached_blocks, 0);
  EXPECT_DOUBLE_EQ(pool.usage(), 0.6);
  pool.record_lookup(10, 4);
  pool.record_lookup(10, 0);
  EXPECT_DOUBLE_EQ(pool.fragmentation().prefix_cache_hit_rate, 0.2);
  EXPECT_EQ(pool.stats().lookups, 2u);
}

TEST(BlockPool, ResetPrefixCacheOnlyWhenNothingIsHeld) {
  BlockPool pool(6, 4, true);
  const auto tokens = seq(0, 8);
  const Ids table = pool.get_new_blocks(2);
  const auto h = cache(pool, table, tokens);
  EXPECT_FALSE(pool.reset_prefix_cache());
  EXPECT_EQ(pool.num_cached_blocks(), 2);
  pool.free_blocks(Ids{2, 1});
  EXPECT_TRUE(pool.reset_prefix_cache());
  EXPECT_EQ(pool.num_cached_blocks(), 0);
  EXPECT_EQ(pool.get_cached_block(query(h[0], std::span(tokens).first(4))), nullptr);
  EXPECT_EQ(pool.free_queue_ids(), (Ids{3, 4, 5, 2, 1}));  // order kept
}

TEST(BlockPool, RejectsTooFewBlocks) {
  EXPECT_THROW(BlockPool(1, 16, true), Error);
  EXPECT_THROW(BlockPool(4, 0, true), Error);
}

}  // namespace
}  // namespace db

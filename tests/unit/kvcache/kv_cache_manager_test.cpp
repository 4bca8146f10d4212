#include "kvcache/kv_cache_manager.h"

#include <gtest/gtest.h>

#include "kv_test_util.h"
#include "util/error.h"

namespace db {
namespace {

using kvtest::admit;
using kvtest::concat;
using kvtest::Ids;
using kvtest::seq;
using kvtest::step;

constexpr int32_t kBs = 4;

TEST(KVCacheManager, FreshAllocationAndFullBlocksCached) {
  KVCacheManager m(kBs, 16, true);
  const auto prompt = seq(0, 10);
  const ComputedBlocks hit = m.get_computed_blocks(1, prompt);
  EXPECT_TRUE(hit.block_ids.empty());
  EXPECT_EQ(hit.num_computed_tokens, 0);
  auto r = admit(m, 1, prompt);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{1, 2, 3}));
  EXPECT_TRUE(r->copies.empty());
  EXPECT_EQ(m.block_table(1), (Ids{1, 2, 3}));
  EXPECT_TRUE(m.pool().block(1).hash && m.pool().block(2).hash);
  EXPECT_FALSE(m.pool().block(3).hash);  // partial block
  EXPECT_EQ(m.num_free_blocks(), 12);

  // Decode: token 10 fills rows of block 3, token 12 needs block 4.
  auto tokens = concat(prompt, {77});
  r = step(m, 1, tokens, 10, 1);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->new_blocks.empty());
  tokens.push_back(78);
  r = step(m, 1, tokens, 11, 1);  // fills block 3 -> cached
  EXPECT_TRUE(r && r->new_blocks.empty());
  EXPECT_TRUE(m.pool().block(3).hash);
  tokens.push_back(79);
  r = step(m, 1, tokens, 12, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{4}));
  EXPECT_EQ(m.block_table(1), (Ids{1, 2, 3, 4}));
}

TEST(KVCacheManager, SharedPrefixHitsExactlyTheCachedFullBlocks) {
  KVCacheManager m(kBs, 16, true);
  const auto a = seq(0, 10);                      // blocks 1 2 | 3 partial
  const auto b = concat(seq(0, 9), seq(100, 3));  // shares tokens 0..8
  ASSERT_TRUE(admit(m, 1, a));
  const ComputedBlocks hit = m.get_computed_blocks(2, b);
  EXPECT_EQ(hit.block_ids, (Ids{1, 2}));
  EXPECT_EQ(hit.num_computed_tokens, 8);
  SlotRequest r;
  r.tokens = b;
  r.num_new_tokens = 4;
  r.prefix_hit = &hit;
  auto res = m.allocate_slots(2, r);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->new_blocks, (Ids{4}));
  EXPECT_EQ(m.block_table(2), (Ids{1, 2, 4}));
  EXPECT_EQ(m.pool().block(1).ref_cnt, 2);
  EXPECT_EQ(m.pool().block(3).ref_cnt, 1);
  EXPECT_TRUE(m.pool().block(4).hash);  // b's third block is full

  const PrefixCacheStats& s = m.prefix_cache_stats();
  EXPECT_EQ(s.lookups, 2u);
  EXPECT_EQ(s.query_tokens, 22u);
  EXPECT_EQ(s.hit_tokens, 8u);
}

TEST(KVCacheManager, WholeCachedPromptRecomputesItsLastBlock) {
  KVCacheManager m(kBs, 16, true);
  ASSERT_TRUE(admit(m, 1, seq(0, 12)));  // 3 full blocks, all cached
  EXPECT_EQ(m.get_computed_blocks(2, seq(0, 12)).block_ids, (Ids{1, 2}));
  EXPECT_EQ(m.get_computed_blocks(3, seq(0, 13)).block_ids, (Ids{1, 2, 3}));
  EXPECT_EQ(m.get_computed_blocks(4, seq(0, 9)).block_ids, (Ids{1, 2}));
  EXPECT_EQ(m.get_computed_blocks(5, seq(0, 8)).block_ids, (Ids{1}));
  EXPECT_TRUE(m.get_computed_blocks(6, seq(0, 1)).block_ids.empty());
  EXPECT_TRUE(m.get_computed_blocks(7, {}).block_ids.empty());
}

TEST(KVCacheManager, FreeingQueuesEachRequestTailFirst) {
  KVCacheManager m(kBs, 10, true);
  ASSERT_TRUE(admit(m, 1, seq(0, 12)));   // 1 2 3
  ASSERT_TRUE(admit(m, 2, seq(100, 8)));  // 4 5
  EXPECT_TRUE(m.free(1));
  EXPECT_TRUE(m.free(2));
  EXPECT_FALSE(m.free(2));
  EXPECT_FALSE(m.has_request(1));
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{6, 7, 8, 9, 3, 2, 1, 5, 4}));
}

TEST(KVCacheManager, SharedBlocksJoinTheQueueWhenTheLastHolderFrees) {
  KVCacheManager m(kBs, 8, true);
  ASSERT_TRUE(admit(m, 1, seq(0, 10)));                      // 1 2 3
  ASSERT_TRUE(admit(m, 2, concat(seq(0, 8), seq(100, 4))));  // hit 1 2, new 4
  m.free(1);
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{5, 6, 7, 3}));
  m.free(2);
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{5, 6, 7, 3, 4, 2, 1}));
}

TEST(KVCacheManager, HitsOnFreeCachedBlocksTakeThemOutOfTheQueue) {
  KVCacheManager m(kBs, 8, true);
  ASSERT_TRUE(admit(m, 1, seq(0, 10)));
  m.free(1);
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{4, 5, 6, 7, 3, 2, 1}));
  auto r = admit(m, 2, seq(0, 9));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{4}));
  EXPECT_EQ(m.block_table(2), (Ids{1, 2, 4}));
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{5, 6, 7, 3}));
  EXPECT_EQ(m.num_free_blocks(), 4);
}

TEST(KVCacheManager, EvictionIsLeastRecentlyFreedTailsFirst) {
  KVCacheManager m(kBs, 7, true);  // usable 1..6
  const auto a = seq(0, 12), b = seq(100, 12);
  ASSERT_TRUE(admit(m, 1, a));  // 1 2 3, all full and cached
  ASSERT_TRUE(admit(m, 2, b));  // 4 5 6
  m.free(1);
  m.free(2);
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(m.pool().num_cached_blocks(), 6);

  auto r = admit(m, 3, seq(200, 8));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{3, 2}));  // a's tail first
  EXPECT_EQ(m.prefix_cache_stats().evicted_blocks, 2u);
  EXPECT_EQ(m.pool().num_cached_blocks(), 6);  // 4 old + 3's two new full blocks
  EXPECT_EQ(m.get_computed_blocks(4, a).block_ids, (Ids{1}));
  EXPECT_EQ(m.get_computed_blocks(4, b).block_ids, (Ids{4, 5}));

  r = admit(m, 4, seq(300, 5));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{1, 6}));
  EXPECT_TRUE(m.get_computed_blocks(5, a).block_ids.empty());
  EXPECT_EQ(m.get_computed_blocks(5, concat(seq(100, 8), {1})).block_ids, (Ids{4, 5}));
}

BlockHash constant_hash(BlockHash, std::span<const int32_t>, std::string_view) { return BlockHash{7}; }

TEST(KVCacheManager, ForcedHashCollisionsNeverGiveAFalseHit) {
  KVCacheManager m(kBs, 16, true, constant_hash);
  const auto x = concat(seq(0, 4), seq(50, 4));  // blocks [a][b]
  ASSERT_TRUE(admit(m, 1, concat(x, {1})));      // 1 2 (+3 partial)
  EXPECT_TRUE(m.get_computed_blocks(2, concat(seq(100, 8), {1})).block_ids.empty());
  EXPECT_EQ(m.get_computed_blocks(2, concat(concat(seq(0, 4), seq(60, 4)), {1})).block_ids, (Ids{1}));
  EXPECT_EQ(m.get_computed_blocks(2, concat(x, {1})).block_ids, (Ids{1, 2}));

  // Same tokens [b] after a different first block [c]: hash and tokens match
  // block 2, only its parent differs.
  ASSERT_TRUE(admit(m, 3, concat(seq(20, 4), {1})));  // caches [c] as block 4
  const auto y = concat(concat(seq(20, 4), seq(50, 4)), {1});
  EXPECT_EQ(m.get_computed_blocks(5, y).block_ids, (Ids{4}));
}

TEST(KVCacheManager, ExtraKeysSeparateCaches) {
  KVCacheManager m(kBs, 16, true);
  const auto p = seq(0, 9);
  ASSERT_TRUE(admit(m, 1, p, BlockExtraKeys{"lora-a"}));
  EXPECT_TRUE(m.get_computed_blocks(2, p).block_ids.empty());
  EXPECT_TRUE(m.get_computed_blocks(2, p, BlockExtraKeys{"lora-b"}).block_ids.empty());
  EXPECT_EQ(m.get_computed_blocks(2, p, BlockExtraKeys{"lora-a"}).block_ids, (Ids{1, 2}));
  // Blocks filled later by the request keep its extra keys.
  auto tokens = concat(p, {9, 10, 11});
  ASSERT_TRUE(step(m, 1, tokens, 9, 3));
  EXPECT_EQ(m.get_computed_blocks(2, concat(tokens, {1}), BlockExtraKeys{"lora-a"}).block_ids, (Ids{1, 2, 3}));
}

TEST(KVCacheManager, NotEnoughBlocksChangesNothing) {
  KVCacheManager m(kBs, 5, true);       // usable 1..4
  ASSERT_TRUE(admit(m, 1, seq(0, 9)));  // 1 2 3
  const Ids queue = m.pool().free_queue_ids();
  EXPECT_FALSE(admit(m, 2, seq(100, 8)));
  EXPECT_FALSE(m.has_request(2));
  auto tokens = seq(0, 9);
  EXPECT_FALSE(step(m, 1, tokens, 9, 0, 8));  // needs 2 more blocks, 1 free
  EXPECT_EQ(m.block_table(1), (Ids{1, 2, 3}));
  EXPECT_EQ(m.pool().free_queue_ids(), queue);
  EXPECT_EQ(m.num_free_blocks(), 1);
  EXPECT_TRUE(step(m, 1, tokens, 9, 0, 7));  // exactly one more block
  EXPECT_EQ(m.block_table(1), (Ids{1, 2, 3, 4}));
}

TEST(KVCacheManager, AdoptingFreeHitBlocksCountsAgainstFreeSpace) {
  KVCacheManager m(kBs, 5, true);  // usable 1..4
  const auto a = seq(0, 9);
  ASSERT_TRUE(admit(m, 1, a));            // 1 2 3
  m.free(1);                              // queue 4 3 2 1
  ASSERT_TRUE(admit(m, 2, seq(100, 5)));  // takes 4 3
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{2, 1}));
  const ComputedBlocks hit = m.get_computed_blocks(3, a);
  EXPECT_EQ(hit.block_ids, (Ids{1, 2}));
  SlotRequest r;
  r.tokens = a;
  r.num_new_tokens = 1;
  r.prefix_hit = &hit;
  EXPECT_FALSE(m.allocate_slots(3, r));  // 2 blocks to take back + 1 new > 2 free
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{2, 1}));
  EXPECT_EQ(m.pool().block(1).ref_cnt, 0);
  EXPECT_FALSE(m.has_request(3));
}

TEST(KVCacheManager, LookaheadSlotsAreAllocatedButNotCached) {
  KVCacheManager m(kBs, 16, true);
  const auto p = seq(0, 6);
  const ComputedBlocks hit = m.get_computed_blocks(1, p);
  SlotRequest r;
  r.tokens = p;
  r.num_new_tokens = 6;
  r.num_lookahead_tokens = 3;
  auto res = m.allocate_slots(1, r);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->new_blocks, (Ids{1, 2, 3}));
  EXPECT_TRUE(m.pool().block(1).hash);
  EXPECT_FALSE(m.pool().block(2).hash);
}

TEST(KVCacheManager, UsageFragmentationAndReset) {
  KVCacheManager m(kBs, 11, true);        // usable 1..10
  ASSERT_TRUE(admit(m, 1, seq(0, 12)));   // 1 2 3
  ASSERT_TRUE(admit(m, 2, seq(100, 9)));  // 4 5 6
  ASSERT_TRUE(admit(m, 3, seq(200, 4)));  // 7
  EXPECT_DOUBLE_EQ(m.usage(), 0.7);
  m.free(2);
  PoolFragmentation f = m.fragmentation();
  EXPECT_EQ(f.num_free_blocks, 6);
  EXPECT_EQ(f.largest_free_run, 3);  // 4 5 6 (8 9 10 ties)
  EXPECT_EQ(f.num_cached_blocks, 3 + 2 + 1);
  EXPECT_DOUBLE_EQ(m.usage(), 0.4);
  EXPECT_FALSE(m.reset_prefix_cache());
  ASSERT_TRUE(admit(m, 4, seq(0, 12)));  // hits 1 2
  EXPECT_DOUBLE_EQ(m.prefix_cache_stats().hit_rate(), 8.0 / (12 + 9 + 4 + 12));
  m.free(1);
  m.free(3);
  m.free(4);
  EXPECT_DOUBLE_EQ(m.usage(), 0.0);
  EXPECT_EQ(m.fragmentation().largest_free_run, 10);
  EXPECT_TRUE(m.reset_prefix_cache());
  EXPECT_EQ(m.pool().num_cached_blocks(), 0);
  EXPECT_TRUE(m.get_computed_blocks(5, seq(0, 12)).block_ids.empty());
}

TEST(KVCacheManager, WithoutPrefixCachingNothingIsShared) {
  KVCacheManager m(kBs, 16, false);
  ASSERT_TRUE(admit(m, 1, seq(0, 12)));
  EXPECT_TRUE(m.get_computed_blocks(2, seq(0, 12)).block_ids.empty());
  auto r = admit(m, 2, seq(0, 12));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{4, 5, 6}));
  EXPECT_EQ(m.prefix_cache_stats().lookups, 0u);
}

TEST(KVCacheManager, ContractViolationsAreReported) {
  KVCacheManager m(kBs, 8, true);
  ASSERT_TRUE(admit(m, 1, seq(0, 9)));
  EXPECT_THROW(m.get_computed_blocks(1, seq(0, 9)), Error);  // already holds blocks
  EXPECT_THROW(m.block_table(9), Error);
  auto tokens = seq(0, 9);
  EXPECT_THROW(step(m, 1, tokens, 20, 1), Error);  // more computed than its blocks hold
  EXPECT_THROW(step(m, 1, tokens, 4, 1), Error);   // would overwrite cached block 2
  EXPECT_THROW(step(m, 1, tokens, 9, -1), Error);
  SlotRequest first;
  first.tokens = tokens;
  first.num_computed_tokens = 3;
  EXPECT_THROW(m.allocate_slots(2, first), Error);  // first call starts at 0

  // A hit whose blocks got evicted before adoption.
  m.free(1);
  const ComputedBlocks stale = m.get_computed_blocks(3, tokens);
  ASSERT_EQ(stale.block_ids, (Ids{1, 2}));
  ASSERT_TRUE(admit(m, 4, seq(100, 28)));  // takes every free block
  SlotRequest late;
  late.tokens = tokens;
  late.num_new_tokens = 1;
  late.prefix_hit = &stale;
  EXPECT_THROW(m.allocate_slots(3, late), Error);
  EXPECT_FALSE(m.has_request(3));
}

}  // namespace
}  // namespace db

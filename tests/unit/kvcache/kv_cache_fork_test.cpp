#include <gtest/gtest.h>

#include "kv_test_util.h"
#include "kvcache/kv_cache_manager.h"
#include "util/error.h"

namespace db {
namespace {

using kvtest::admit;
using kvtest::concat;
using kvtest::Ids;
using kvtest::seq;
using kvtest::step;

constexpr int32_t kForkBs = 4;

TEST(KVCacheFork, ChildSharesEveryBlock) {
  KVCacheManager m(kForkBs, 16, true);
  ASSERT_TRUE(admit(m, 1, seq(0, 10)));  // 1 2 3
  m.fork(1, 2);
  EXPECT_EQ(m.block_table(2), (Ids{1, 2, 3}));
  for (int id : {1, 2, 3}) EXPECT_EQ(m.pool().block(id).ref_cnt, 2);
  EXPECT_EQ(m.num_free_blocks(), 12);
  EXPECT_THROW(m.fork(9, 3), Error);
  EXPECT_THROW(m.fork(1, 2), Error);
}

TEST(KVCacheFork, AppendingIntoASharedPartialBlockCopiesIt) {
  KVCacheManager m(kForkBs, 16, true);
  const auto prompt = seq(0, 10);
  ASSERT_TRUE(admit(m, 1, prompt));  // 1 2 3 (3 holds rows 0-1)
  m.fork(1, 2);
  const auto child_tokens = concat(prompt, {500});
  auto r = step(m, 2, child_tokens, 10, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{4}));
  ASSERT_EQ(r->copies.size(), 1u);
  EXPECT_EQ(r->copies[0], (BlockCopy{3, 4}));
  EXPECT_EQ(m.block_table(2), (Ids{1, 2, 4}));
  EXPECT_EQ(m.pool().block(3).ref_cnt, 1);

  // The parent now holds block 3 alone and writes in place.
  r = step(m, 1, concat(prompt, {600}), 10, 1);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->new_blocks.empty());
  EXPECT_TRUE(r->copies.empty());
  EXPECT_EQ(m.block_table(1), (Ids{1, 2, 3}));
}

TEST(KVCacheFork, ParentWritingFirstCopiesToo) {
  KVCacheManager m(kForkBs, 16, true);
  const auto prompt = seq(0, 6);
  ASSERT_TRUE(admit(m, 1, prompt));  // 1 2
  m.fork(1, 2);
  auto r = step(m, 1, concat(prompt, {7}), 6, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->copies, (std::vector<BlockCopy>{{2, 3}}));
  EXPECT_EQ(m.block_table(1), (Ids{1, 3}));
  r = step(m, 2, concat(prompt, {8}), 6, 1);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->copies.empty() && r->new_blocks.empty());
  EXPECT_EQ(m.block_table(2), (Ids{1, 2}));
}

TEST(KVCacheFork, FullLastBlockNeedsNoCopy) {
  KVCacheManager m(kForkBs, 16, true);
  const auto prompt = seq(0, 8);
  ASSERT_TRUE(admit(m, 1, prompt));  // 1 2, both full
  m.fork(1, 2);
  auto r = step(m, 2, concat(prompt, {9}), 8, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{3}));
  EXPECT_TRUE(r->copies.empty());
  EXPECT_EQ(m.block_table(2), (Ids{1, 2, 3}));
}

TEST(KVCacheFork, SharedLookaheadBlocksAreReplacedWithoutCopy) {
  KVCacheManager m(kForkBs, 16, true);
  const auto prompt = seq(0, 10);
  const ComputedBlocks hit = m.get_computed_blocks(1, prompt);
  SlotRequest first;
  first.tokens = prompt;
  first.num_new_tokens = 10;
  first.num_lookahead_tokens = 3;  // slots up to 13: blocks 1 2 3 4
  ASSERT_TRUE(m.allocate_slots(1, first));
  EXPECT_EQ(m.block_table(1), (Ids{1, 2, 3, 4}));
  m.fork(1, 2);
  auto r = step(m, 2, concat(prompt, {50}), 10, 3);  // rows 10 11 | 12
  ASSERT_TRUE(r);
  EXPECT_EQ(r->new_blocks, (Ids{5, 6}));
  EXPECT_EQ(r->copies, (std::vector<BlockCopy>{{3, 5}}));
  EXPECT_EQ(m.block_table(2), (Ids{1, 2, 5, 6}));
  EXPECT_EQ(m.pool().block(4).ref_cnt, 1);
}

TEST(KVCacheFork, CopyOnWriteThatDoesNotFitChangesNothing) {
  KVCacheManager m(kForkBs, 4, true);  // usable 1..3
  const auto prompt = seq(0, 10);
  ASSERT_TRUE(admit(m, 1, prompt));  // 1 2 3
  m.fork(1, 2);
  EXPECT_FALSE(step(m, 2, concat(prompt, {1}), 10, 1));
  EXPECT_EQ(m.block_table(2), (Ids{1, 2, 3}));
  EXPECT_EQ(m.pool().block(3).ref_cnt, 2);
}

TEST(KVCacheFork, BlocksReturnWhenTheLastHolderFrees) {
  KVCacheManager m(kForkBs, 8, true);
  const auto prompt = seq(0, 6);
  ASSERT_TRUE(admit(m, 1, prompt));  // 1 2
  m.fork(1, 2);
  ASSERT_TRUE(step(m, 2, concat(prompt, {9}), 6, 1));  // child: 1 3
  m.free(1);
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{4, 5, 6, 7, 2}));
  m.free(2);
  EXPECT_EQ(m.pool().free_queue_ids(), (Ids{4, 5, 6, 7, 2, 3, 1}));
}

TEST(KVCacheFork, DivergentForksCacheTheirOwnBlocks) {
  KVCacheManager m(kForkBs, 16, true);
  const auto prompt = seq(0, 6);
  ASSERT_TRUE(admit(m, 1, prompt));  // 1 2
  m.fork(1, 2);
  const auto a = concat(prompt, {70, 71}), b = concat(prompt, {80, 81});
  ASSERT_TRUE(step(m, 1, a, 6, 2));  // parent copies 2 -> 3 and fills it
  ASSERT_TRUE(step(m, 2, b, 6, 2));  // child fills 2 in place
  EXPECT_EQ(m.block_table(1), (Ids{1, 3}));
  EXPECT_EQ(m.block_table(2), (Ids{1, 2}));
  EXPECT_EQ(m.get_computed_blocks(3, concat(a, {0})).block_ids, (Ids{1, 3}));
  EXPECT_EQ(m.get_computed_blocks(3, concat(b, {0})).block_ids, (Ids{1, 2}));
}

}  // namespace
}  // namespace db

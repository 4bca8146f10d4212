#include "kvcache/free_block_queue.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace db {
namespace {

using Ids = std::vector<int32_t>;

std::vector<KVBlock> make_blocks(int n) {
  std::vector<KVBlock> blocks(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) blocks[static_cast<size_t>(i)].id = i;
  return blocks;
}

TEST(FreeBlockQueue, StartsInIdOrderAndPopsFromTheHead) {
  auto blocks = make_blocks(5);
  FreeBlockQueue q(blocks);
  EXPECT_EQ(q.size(), 5);
  EXPECT_EQ(q.ids(), (Ids{0, 1, 2, 3, 4}));
  EXPECT_EQ(q.popleft()->id, 0);
  auto two = q.popleft_n(2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0]->id, 1);
  EXPECT_EQ(two[1]->id, 2);
  EXPECT_EQ(q.ids(), (Ids{3, 4}));
  EXPECT_FALSE(FreeBlockQueue::contains(blocks[0]));
  EXPECT_TRUE(FreeBlockQueue::contains(blocks[3]));
}

TEST(FreeBlockQueue, RemoveFromMiddleAndAppend) {
  auto blocks = make_blocks(6);
  FreeBlockQueue q(blocks);
  q.remove(&blocks[2]);
  q.remove(&blocks[0]);  // head
  q.remove(&blocks[5]);  // tail
  EXPECT_EQ(q.ids(), (Ids{1, 3, 4}));
  EXPECT_EQ(q.size(), 3);
  q.append(&blocks[2]);
  KVBlock* more[] = {&blocks[5], &blocks[0]};
  q.append_n(more);
  EXPECT_EQ(q.ids(), (Ids{1, 3, 4, 2, 5, 0}));
  q.popleft_n(6);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.ids(), Ids{});
  q.append(&blocks[4]);
  EXPECT_EQ(q.ids(), (Ids{4}));
}

TEST(FreeBlockQueue, MisuseIsReported) {
  auto blocks = make_blocks(2);
  FreeBlockQueue q(blocks);
  EXPECT_THROW(q.append(&blocks[0]), Error);  // already queued
  q.popleft_n(2);
  EXPECT_THROW(q.popleft(), Error);
  EXPECT_THROW(q.popleft_n(1), Error);
  EXPECT_THROW(q.remove(&blocks[1]), Error);  // not queued
}

}  // namespace
}  // namespace db

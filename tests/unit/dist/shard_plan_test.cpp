// Which heads and feed-forward columns each tensor-parallel rank holds, and the
// sizes that are refused.
#include "dist/shard_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "error_of.h"

namespace db::dist {
namespace {

std::string error_of(int n_heads, int n_kv, int64_t ffn, int64_t granule, int size) {
  return test::error_of([&] { make_shard_plan(n_heads, n_kv, ffn, granule, 0, size); });
}

TEST(ShardPlan, SmolLM2AtTwoRanksSplitsKvHeadsTwoAndOne) {
  // 9 query heads, 3 KV heads, FFN 1536 in Q4_1 blocks of 32.
  const ShardPlan r0 = make_shard_plan(9, 3, 1536, 32, 0, 2), r1 = make_shard_plan(9, 3, 1536, 32, 1, 2);
  EXPECT_EQ(r0.kv_head_begin, 0);
  EXPECT_EQ(r0.kv_head_end, 2);
  EXPECT_EQ(r0.head_begin, 0);
  EXPECT_EQ(r0.head_end, 6);
  EXPECT_EQ(r1.kv_head_begin, 2);
  EXPECT_EQ(r1.kv_head_end, 3);
  EXPECT_EQ(r1.head_begin, 6);
  EXPECT_EQ(r1.head_end, 9);
  EXPECT_EQ(r0.ffn_begin, 0);
  EXPECT_EQ(r0.ffn_end, 768);
  EXPECT_EQ(r1.ffn_begin, 768);
  EXPECT_EQ(r1.ffn_end, 1536);
}

TEST(ShardPlan, PartsCoverEverythingOnceInOrder) {
  for (int size = 1; size <= 5; ++size) {
    int kv_next = 0, head_next = 0;
    int64_t ffn_next = 0;
    for (int r = 0; r < size; ++r) {
      const ShardPlan p = make_shard_plan(20, 5, 96 * 7, 96, r, size);
      EXPECT_EQ(p.kv_head_begin, kv_next);
      EXPECT_EQ(p.head_begin, head_next);
      EXPECT_EQ(p.ffn_begin, ffn_next);
      EXPECT_GE(p.n_kv_heads(), 1);
      EXPECT_EQ(p.ffn_begin % 96, 0);
      EXPECT_EQ(p.n_heads(), 4 * p.n_kv_heads());
      kv_next = p.kv_head_end;
      head_next = p.head_end;
      ffn_next = p.ffn_end;
    }
    EXPECT_EQ(kv_next, 5);
    EXPECT_EQ(head_next, 20);
    EXPECT_EQ(ffn_next, 96 * 7);
  }
}

TEST(ShardPlan, MoreRanksThanKvHeadsIsRefused) {
  const std::string e = error_of(9, 3, 1536, 32, 4);
  EXPECT_NE(e.find("--tensor-parallel-size 4 is above the model's 3 KV heads"), std::string::npos) << e;
  EXPECT_EQ(error_of(9, 3, 1536, 32, 3), "");
}

TEST(ShardPlan, AFeedForwardThatDoesNotSplitIntoWholeBlocksIsRefused) {
  const std::string e = error_of(4, 2, 48, 32, 2);
  EXPECT_NE(e.find("feed-forward width 48 does not split into 2 parts of whole quantization blocks of 32"),
            std::string::npos)
      << e;
  EXPECT_NE(error_of(4, 2, 32, 32, 2), "");  // one block for two ranks
}

TEST(ShardPlan, BadGroupsAreRefused) {
  EXPECT_NE(error_of(9, 2, 64, 32, 1), "");  // 9 heads over 2 KV heads
  EXPECT_NE(error_of(4, 2, 64, 32, 0), "");
  EXPECT_THROW(make_shard_plan(4, 2, 64, 32, 2, 2), Error);
}

}  // namespace
}  // namespace db::dist

// The fresh-block allowance: how many never-used blocks (new resident memory)
// allocation may take, and the exemption for a sequence running alone.
#include <gtest/gtest.h>

#include "kvcache/block_pool.h"

namespace db {
namespace {

TEST(BlockPoolAllowance, NeverUsedBlocksAreTheHeadAndTheAllowanceBoundsThem) {
  BlockPool pool(/*num_blocks=*/11, /*block_size=*/4, /*enable_caching=*/false);
  EXPECT_EQ(pool.num_resident_blocks(), 0);
  EXPECT_EQ(pool.get_new_blocks(3), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(pool.num_resident_blocks(), 3);
  const int32_t release[] = {2, 1};
  pool.free_blocks(release);  // 2 used blocks free, 7 never used
  pool.set_fresh_block_allowance(1);
  EXPECT_EQ(pool.num_allocatable_blocks(), 3);
  EXPECT_EQ(pool.num_allocatable_blocks(/*exempt=*/true), 9);
  // One never-used block while the allowance lasts, then the used ones.
  EXPECT_EQ(pool.get_new_blocks(3), (std::vector<int32_t>{4, 2, 1}));
  EXPECT_EQ(pool.fresh_block_allowance(), 0);
  EXPECT_EQ(pool.num_resident_blocks(), 4);
  EXPECT_EQ(pool.num_allocatable_blocks(), 0);
  // An exempt allocation passes the allowance.
  EXPECT_EQ(pool.get_new_blocks(2, /*exempt=*/true), (std::vector<int32_t>{5, 6}));
  const int32_t back[] = {5};
  pool.free_blocks(back);
  // Exempt with a used block free: the used one first, then never-used.
  EXPECT_EQ(pool.get_new_blocks(2, /*exempt=*/true), (std::vector<int32_t>{5, 7}));
  pool.set_fresh_block_allowance(-1);  // no limit: never-used blocks first again
  EXPECT_EQ(pool.num_allocatable_blocks(), 3);
  EXPECT_EQ(pool.get_new_blocks(1), (std::vector<int32_t>{8}));
}

TEST(BlockPoolAllowance, TheLastNeverUsedBlocksThenUsedOnes) {
  BlockPool pool(/*num_blocks=*/5, /*block_size=*/4, /*enable_caching=*/false);
  EXPECT_EQ(pool.get_new_blocks(2), (std::vector<int32_t>{1, 2}));
  const int32_t release[] = {1};
  pool.free_blocks(release);
  pool.set_fresh_block_allowance(5);
  // Both never-used blocks (3, 4) go first, then the used one: no never-used block is left to skip.
  EXPECT_EQ(pool.get_new_blocks(3), (std::vector<int32_t>{3, 4, 1}));
  EXPECT_EQ(pool.num_untouched_blocks(), 0);
  EXPECT_EQ(pool.fresh_block_allowance(), 3);
}

}  // namespace
}  // namespace db

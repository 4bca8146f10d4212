#include "runner/kv_block_copy.h"

#include <gtest/gtest.h>

#include <cstring>

#include "util/error.h"

namespace db {
namespace {

TEST(KVBlockCopy, CopiesEveryRowOfEveryLayer) {
  KVStore kv(/*n_layers=*/2, /*n_kv_heads=*/2, /*head_dim=*/4, /*num_blocks=*/4, /*block_size=*/3, DType::F32);
  const size_t row = kv.row_nbytes();
  for (int l = 0; l < 2; ++l)
    for (int64_t slot = 0; slot < kv.num_slots(); ++slot) {
      std::memset(kv.k_row(l, slot), int(1 + l * 50 + slot), row);
      std::memset(kv.v_row(l, slot), int(101 + l * 50 + slot), row);
    }
  const BlockCopy copies[] = {{1, 3}, {2, 2}};
  copy_kv_blocks(kv, copies);
  for (int l = 0; l < 2; ++l)
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(std::memcmp(kv.k_row(l, 3 * 3 + r), kv.k_row(l, 1 * 3 + r), row), 0);
      EXPECT_EQ(std::memcmp(kv.v_row(l, 3 * 3 + r), kv.v_row(l, 1 * 3 + r), row), 0);
      EXPECT_EQ(kv.k_row(l, 2 * 3 + r)[0], uint8_t(1 + l * 50 + 2 * 3 + r));  // untouched
    }
  EXPECT_EQ(kv.k_row(0, 0)[0], 1);
}

TEST(KVBlockCopy, RejectsBlocksOutsideTheStore) {
  KVStore kv(1, 1, 4, 2, 4, DType::F16);
  const BlockCopy bad[] = {{0, 2}};
  EXPECT_THROW(copy_kv_blocks(kv, bad), Error);
}

}  // namespace
}  // namespace db

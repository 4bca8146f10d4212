#include "runner/kv_block_copy.h"

#include <gtest/gtest.h>

#include <cstring>

#include "backend/cpu_backend.h"
#include "util/error.h"

namespace db {
namespace {

// `memory`: null for host memory, or a backend whose memory holds the store (as a
// device backend's would; the CPU backend's is host memory the test can read).
void check_copies_every_row_of_every_layer(ComputeBackend* memory) {
  KVStore kv(KVCacheShape::key_value(/*n_layers=*/2, /*n_kv_heads=*/2, /*head_dim=*/4), /*num_blocks=*/4,
             /*block_size=*/3, DType::F32, memory);
  const size_t row = kv.k_row_nbytes();
  ASSERT_EQ(kv.v_row_nbytes(), row);
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

TEST(KVBlockCopy, CopiesEveryRowOfEveryLayer) { check_copies_every_row_of_every_layer(nullptr); }

// A store in a backend's memory is allocated and copied through that backend.
TEST(KVBlockCopy, CopiesInTheMemoryOfABackend) {
  CpuBackend backend;
  ThreadPool pool(1);
  backend.set_host_pool(pool);
  check_copies_every_row_of_every_layer(&backend);
}

// Latent: one array per layer; the copy moves whole latent rows (V is their
// prefix) and leaves other blocks alone.
TEST(KVBlockCopy, CopiesTheLatentRowsOfEveryLayer) {
  KVStore kv(KVCacheShape::latent(/*n_layers=*/3, /*kv_lora_rank=*/6, /*rope_dims=*/2), /*num_blocks=*/4,
             /*block_size=*/2, DType::F16);
  const size_t row = kv.k_row_nbytes();
  ASSERT_EQ(row, 8u * 2u);
  auto fill = [&](int l, int64_t slot) { return uint8_t(1 + l * 40 + slot); };
  for (int l = 0; l < 3; ++l)
    for (int64_t slot = 0; slot < kv.num_slots(); ++slot) {
      std::memset(kv.k_row(l, slot), fill(l, slot), row);
      kv.k_row(l, slot)[row - 1] = uint8_t(200 + slot);  // the rope part differs from the latent part
    }
  const BlockCopy copies[] = {{0, 3}, {1, 2}};
  copy_kv_blocks(kv, copies);
  for (int l = 0; l < 3; ++l)
    for (int r = 0; r < 2; ++r) {
      const int64_t dst0 = 3 * 2 + r, dst1 = 2 * 2 + r;
      EXPECT_EQ(std::memcmp(kv.k_row(l, dst0), kv.k_row(l, 0 * 2 + r), row), 0) << "layer " << l << " row " << r;
      EXPECT_EQ(std::memcmp(kv.k_row(l, dst1), kv.k_row(l, 1 * 2 + r), row), 0) << "layer " << l << " row " << r;
      EXPECT_EQ(kv.k_row(l, dst0)[0], fill(l, r));
      EXPECT_EQ(kv.k_row(l, dst0)[row - 1], uint8_t(200 + r));
      EXPECT_EQ(kv.v_row(l, dst1)[0], fill(l, 2 + r));  // V reads the copied latent
      EXPECT_EQ(kv.k_row(l, 0 * 2 + r)[0], fill(l, r));  // sources untouched
    }
}

TEST(KVBlockCopy, RejectsBlocksOutsideTheStore) {
  KVStore kv(KVCacheShape::key_value(1, 1, 4), 2, 4, DType::F16);
  const BlockCopy bad[] = {{0, 2}};
  EXPECT_THROW(copy_kv_blocks(kv, bad), Error);
}

}  // namespace
}  // namespace db

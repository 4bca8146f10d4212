#include "model/kv_store.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "util/error.h"

namespace db {
namespace {

// Writes a distinct byte pattern into every row of every array, then checks each
// row still holds its own pattern: no two slots (or layers, or K and V) share bytes.
void expect_rows_disjoint(KVStore& kv) {
  auto tag = [](int l, int64_t slot, int which) { return uint8_t((l * 31 + slot * 7 + which * 101) % 251 + 1); };
  for (int l = 0; l < kv.n_layers(); ++l)
    for (int64_t s = 0; s < kv.num_slots(); ++s) {
      std::memset(kv.k_row(l, s), tag(l, s, 0), kv.k_row_nbytes());
      if (kv.has_v_arrays()) std::memset(kv.v_row(l, s), tag(l, s, 1), kv.v_row_nbytes());
    }
  for (int l = 0; l < kv.n_layers(); ++l)
    for (int64_t s = 0; s < kv.num_slots(); ++s) {
      const std::vector<uint8_t> k(kv.k_row_nbytes(), tag(l, s, 0));
      EXPECT_EQ(std::memcmp(kv.k_row(l, s), k.data(), k.size()), 0) << "K layer " << l << " slot " << s;
      if (kv.has_v_arrays()) {
        const std::vector<uint8_t> v(kv.v_row_nbytes(), tag(l, s, 1));
        EXPECT_EQ(std::memcmp(kv.v_row(l, s), v.data(), v.size()), 0) << "V layer " << l << " slot " << s;
      }
    }
}

TEST(KVStore, KeyValueSizesAndRows) {
  // 3 layers, 2 kv heads of 8, F16, 5 blocks of 4 tokens: rows of 32 bytes.
  const KVCacheShape shape = KVCacheShape::key_value(3, 2, 8);
  KVStore kv(shape, 5, 4, DType::F16);
  EXPECT_EQ(kv.layout(), KVLayout::KeyValue);
  EXPECT_EQ(kv.shape(), shape);
  EXPECT_TRUE(kv.has_v_arrays());
  EXPECT_EQ(kv.k_row_stride(), 16);
  EXPECT_EQ(kv.v_row_stride(), 16);
  EXPECT_EQ(kv.k_row_nbytes(), 32u);
  EXPECT_EQ(kv.v_row_nbytes(), 32u);
  EXPECT_EQ(kv.num_slots(), 20);
  EXPECT_EQ(kv.nbytes(), 3u * 2u * 20u * 32u);
  EXPECT_EQ(kv.nbytes(), shape.bytes_per_token(DType::F16) * 20);
  EXPECT_EQ(kv.k_row(1, 7) - kv.k_layer(1), 7 * 32);
  EXPECT_EQ(kv.v_row(1, 7) - kv.v_layer(1), 7 * 32);
  EXPECT_EQ(kv.v_layer(2) - kv.k_layer(2), 20 * 32);  // V follows its layer's K
  EXPECT_EQ(kv.v_row(2, 19) + 32, kv.k_layer(0) + kv.nbytes());  // the last V row ends the store
  EXPECT_EQ(*kv.k_row(0, 0), 0);                                 // zeroed
  EXPECT_THROW(kv.k_row(0, 20), Error);
  EXPECT_THROW(kv.v_row(3, 0), Error);
  expect_rows_disjoint(kv);
}

TEST(KVStore, KeyValueWithDifferentWidths) {
  KVStore kv(KVCacheShape{KVLayout::KeyValue, 2, 6, 4}, 2, 2, DType::F32);
  EXPECT_EQ(kv.k_row_nbytes(), 24u);
  EXPECT_EQ(kv.v_row_nbytes(), 16u);
  EXPECT_EQ(kv.nbytes(), 2u * 4u * (24u + 16u));
  EXPECT_EQ(kv.v_row(1, 3) + 16, kv.k_layer(0) + kv.nbytes());
  expect_rows_disjoint(kv);
}

TEST(KVStore, LatentAliasesVInK) {
  // DeepSeek-V2-Lite widths: latent 512 + rope 64, V = the first 512; 2 layers, 3 blocks of 4.
  const KVCacheShape shape = KVCacheShape::latent(2, 512, 64);
  KVStore kv(shape, 3, 4, DType::F16);
  EXPECT_EQ(kv.layout(), KVLayout::Latent);
  EXPECT_FALSE(kv.has_v_arrays());
  EXPECT_EQ(kv.k_row_stride(), 576);
  EXPECT_EQ(kv.v_row_stride(), 576);  // V rows have K's stride
  EXPECT_EQ(kv.k_row_nbytes(), 1152u);
  EXPECT_EQ(kv.v_row_nbytes(), 1152u);
  EXPECT_EQ(kv.nbytes(), 2u * 12u * 1152u);  // no V memory at all
  EXPECT_EQ(kv.nbytes(), shape.bytes_per_token(DType::F16) * 12);
  for (int l = 0; l < 2; ++l) {
    EXPECT_EQ(kv.v_layer(l), kv.k_layer(l));
    for (int64_t s = 0; s < kv.num_slots(); ++s) EXPECT_EQ(kv.v_row(l, s), kv.k_row(l, s));
  }
  EXPECT_EQ(kv.k_layer(1) - kv.k_layer(0), 12 * 1152);
  EXPECT_EQ(kv.k_row(1, 11) + 1152, kv.k_layer(0) + kv.nbytes());  // the last latent row ends the store
  // A write through K is what V reads.
  std::memset(kv.k_row(1, 5), 0x3c, 1024);
  EXPECT_EQ(kv.v_row(1, 5)[1023], 0x3c);
  EXPECT_THROW(kv.v_row(0, 12), Error);
  EXPECT_THROW(kv.k_layer(2), Error);
  expect_rows_disjoint(kv);
}

TEST(KVStore, RejectsBadDtypesShapesAndSizes) {
  const KVCacheShape shape = KVCacheShape::key_value(1, 1, 8);
  EXPECT_THROW(KVStore(shape, 1, 16, DType::Q4_0), Error);
  EXPECT_THROW(KVStore(shape, 0, 16), Error);
  EXPECT_THROW(KVStore(shape, 1, 0), Error);
  EXPECT_THROW(KVStore(KVCacheShape{}, 1, 16), Error);
  EXPECT_THROW(KVStore((KVCacheShape{KVLayout::Latent, 1, 4, 8}), 1, 16), Error);
  EXPECT_EQ(KVStore(shape, 1, 16, DType::F32).k_row_nbytes(), 32u);
  EXPECT_EQ(KVStore(KVCacheShape::latent(1, 4, 4), 1, 16, DType::BF16).nbytes(), 16u * 8u * 2u);
}

// Q8_0 rows are whole 34-byte blocks (32 codes and a scale), also for rows
// shorter than a block; the store's size is what the pool budgets.
TEST(KVStore, Q8_0RowsAreWholeBlocks) {
  const KVCacheShape kv = KVCacheShape::key_value(2, 3, 64), latent = KVCacheShape::latent(2, 32, 8);
  const KVStore a(kv, 4, 16, DType::Q8_0), b(latent, 4, 16, DType::Q8_0);
  EXPECT_EQ(a.k_row_nbytes(), 6u * 34u);
  EXPECT_EQ(a.v_row_nbytes(), 6u * 34u);
  EXPECT_EQ(a.nbytes(), kv.bytes_per_token(DType::Q8_0) * 64);
  EXPECT_EQ(b.k_row_nbytes(), 2u * 34u);  // 40 elements: one whole block and one padded
  EXPECT_EQ(b.v_row_nbytes(), b.k_row_nbytes());
  EXPECT_EQ(b.nbytes(), latent.bytes_per_token(DType::Q8_0) * 64);
  EXPECT_EQ(a.k_row(1, 5) - a.k_row(1, 4), 6 * 34);
}

}  // namespace
}  // namespace db

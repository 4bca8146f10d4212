#include "kvcache/kv_cache_spec.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace db {
namespace {

TEST(KVCacheSpec, StandardAndMlaBlockBytes) {
  // SmolLM2-135M: 30 layers, 3 kv heads of 64, F16, 16 tokens a block.
  const KVCacheSpec s = standard_kv_spec(30, 3, 64, 16, 2);
  EXPECT_EQ(s.kind, "standard");
  EXPECT_EQ(s.block_size, 16);
  EXPECT_EQ(s.bytes_per_block, size_t(2) * 30 * 3 * 64 * 2 * 16);
  // DeepSeek-V3 MLA: 61 layers, latent 512 + rope 64.
  const KVCacheSpec mla = mla_kv_spec(61, 512, 64, 64, 2);
  EXPECT_EQ(mla.kind, "mla");
  EXPECT_EQ(mla.bytes_per_block, size_t(61) * 576 * 2 * 64);
  EXPECT_THROW(standard_kv_spec(30, 0, 64, 16, 2), Error);
  EXPECT_THROW(mla_kv_spec(61, 512, 64, -1, 2), Error);
}

TEST(KVCacheSpec, BlocksFromABudget) {
  const KVCacheSpec s{16, 1000, "standard"};
  EXPECT_EQ(num_blocks_for_budget(s, 2000), 2);
  EXPECT_EQ(num_blocks_for_budget(s, 1'000'999), 1000);
  EXPECT_THROW(num_blocks_for_budget(s, 1999), Error);
  EXPECT_THROW(num_blocks_for_budget(KVCacheSpec{16, 0, "standard"}, 1 << 20), Error);
  EXPECT_EQ(num_blocks_for_budget(KVCacheSpec{16, 1, "mla"}, size_t(1) << 40), INT32_MAX);
  try {
    num_blocks_for_budget(s, 500);
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache-memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace db

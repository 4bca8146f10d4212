#include "kvcache/kv_cache_spec.h"

#include <gtest/gtest.h>

#include "tensor/kv_row_bytes.h"
#include "util/error.h"

namespace db {
namespace {

TEST(KVCacheShape, KeyValueBytesPerToken) {
  // SmolLM2-135M: 30 layers, 3 kv heads of 64: K and V of 192 each.
  const KVCacheShape s = KVCacheShape::key_value(30, 3, 64);
  EXPECT_EQ(s.layout, KVLayout::KeyValue);
  EXPECT_EQ(s.k_width, 192);
  EXPECT_EQ(s.v_width, 192);
  EXPECT_EQ(s.bytes_per_token(DType::F16), size_t(2) * 30 * 192 * 2);  // 2 * n_layers * width * elem
  EXPECT_EQ(s.bytes_per_token(DType::F32), size_t(2) * 30 * 192 * 4);
  EXPECT_EQ(s.bytes_per_token(DType::BF16), size_t(2) * 30 * 192 * 2);
  const KVCacheSpec spec{s, 16, DType::F16};
  EXPECT_EQ(spec.bytes_per_block(), size_t(2) * 30 * 192 * 2 * 16);
  EXPECT_THROW(KVCacheShape::key_value(30, 0, 64), Error);
  EXPECT_THROW(KVCacheShape::key_value(0, 3, 64), Error);
  EXPECT_THROW(s.bytes_per_token(DType::Q4_0), Error);
  // Q8_0: each 192-wide row is 6 blocks of 34 bytes, 1.88x fewer bytes than F16.
  EXPECT_EQ(s.bytes_per_token(DType::Q8_0), size_t(2) * 30 * 6 * 34);
  // Rows round up to whole blocks: 2 kv heads of 16 (tiny fixtures) take one block each for K and V.
  EXPECT_EQ(KVCacheShape::key_value(2, 2, 16).bytes_per_token(DType::Q8_0), size_t(2) * 2 * 34);
  EXPECT_EQ(KVCacheShape::key_value(1, 1, 40).bytes_per_token(DType::Q8_0), size_t(2) * 2 * 34);
}

TEST(KVCacheShape, KvDtypeNames) {
  EXPECT_EQ(kv_dtype_from_name("q8_0", "--kv-dtype"), DType::Q8_0);
  EXPECT_EQ(kv_dtype_from_name("bf16", "--kv-dtype"), DType::BF16);
  EXPECT_THROW(kv_dtype_from_name("q4_0", "--kv-dtype"), Error);
  EXPECT_EQ(kv_row_bytes(DType::F16, 7), 14u);
  EXPECT_EQ(kv_row_bytes(DType::Q8_0, 1), 34u);
  EXPECT_EQ(kv_row_bytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(kv_row_bytes(DType::Q8_0, 65), 102u);
}

TEST(KVCacheShape, LatentBytesPerToken) {
  // DeepSeek-V2-Lite: 27 layers, kv_lora_rank 512 + rope 64, F16: 27 x 576 x 2 bytes.
  const KVCacheShape lite = KVCacheShape::latent(27, 512, 64);
  EXPECT_EQ(lite.layout, KVLayout::Latent);
  EXPECT_EQ(lite.k_width, 576);
  EXPECT_EQ(lite.v_width, 512);
  EXPECT_EQ(lite.bytes_per_token(DType::F16), 31104u);
  EXPECT_EQ(lite.bytes_per_token(DType::F32), 62208u);
  EXPECT_EQ(lite.bytes_per_token(DType::Q8_0), size_t(27) * 18 * 34);  // 576 = 18 blocks of 32
  // DeepSeek-V3: 61 layers, 64-token blocks.
  EXPECT_EQ((KVCacheSpec{KVCacheShape::latent(61, 512, 64), 64, DType::F16}.bytes_per_block()),
            size_t(61) * 576 * 2 * 64);
  // The same widths as KeyValue would cost K and V.
  KVCacheShape as_kv = lite;
  as_kv.layout = KVLayout::KeyValue;
  EXPECT_EQ(as_kv.bytes_per_token(DType::F16), size_t(27) * (576 + 512) * 2);
  EXPECT_NE(as_kv, lite);
  EXPECT_THROW(KVCacheShape::latent(61, 0, 64), Error);
  EXPECT_THROW((KVCacheShape{KVLayout::Latent, 2, 8, 9}.validate()), Error);  // V longer than the latent row
  EXPECT_STREQ(kv_layout_name(KVLayout::Latent), "Latent");
  EXPECT_STREQ(kv_layout_name(KVLayout::KeyValue), "KeyValue");
  EXPECT_NE(lite.describe().find("Latent"), std::string::npos) << lite.describe();
}

TEST(KVCacheSpec, BlocksFromABudget) {
  // 1 layer x K 125 + V 125, F32: 1000 bytes a token, 1 token a block.
  const KVCacheSpec s{KVCacheShape{KVLayout::KeyValue, 1, 125, 125}, 1, DType::F32};
  ASSERT_EQ(s.bytes_per_block(), 1000u);
  EXPECT_EQ(num_blocks_for_budget(s, 2000), 2);
  EXPECT_EQ(num_blocks_for_budget(s, 1'000'999), 1000);
  EXPECT_THROW(num_blocks_for_budget(s, 1999), Error);
  EXPECT_THROW(num_blocks_for_budget(KVCacheSpec{s.shape, 0, DType::F32}, 1 << 20), Error);
  EXPECT_THROW(num_blocks_for_budget(KVCacheSpec{KVCacheShape{}, 16, DType::F16}, 1 << 20), Error);
  EXPECT_EQ(num_blocks_for_budget(KVCacheSpec{KVCacheShape::latent(1, 1, 0), 1, DType::F16}, size_t(1) << 40),
            INT32_MAX);
  // DeepSeek-V2-Lite, F16, 16-token blocks: 497664 bytes a block; 1 GiB holds 2157 of them.
  const KVCacheSpec lite{KVCacheShape::latent(27, 512, 64), 16, DType::F16};
  EXPECT_EQ(num_blocks_for_budget(lite, size_t(1) << 30), int32_t((size_t(1) << 30) / (31104 * 16)));
  EXPECT_EQ(num_blocks_for_budget(lite, size_t(1) << 30), 2157);
  try {
    num_blocks_for_budget(s, 500);
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-cache-memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("KeyValue"), std::string::npos) << e.what();
  }
  try {
    num_blocks_for_budget(lite, 31104 * 16 * 2 - 1);
    FAIL() << "expected db::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too small"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Latent layout"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace db

#include <gtest/gtest.h>

#include <string>

#include "engine/engine_core.h"

namespace db {
namespace {

TEST(KVPoolSummary, NamesLayoutBytesPerTokenAndTokensPerGiB) {
  // DeepSeek-V2-Lite, F16: 27 x 576 x 2 = 31104 bytes a token; 2^30 / 31104 = 34521 tokens a GiB.
  const std::string latent = describe_kv_pool(KVCacheSpec{KVCacheShape::latent(27, 512, 64), 16, DType::F16}, 100);
  EXPECT_NE(latent.find("Latent"), std::string::npos) << latent;
  EXPECT_NE(latent.find("31104 bytes/token"), std::string::npos) << latent;
  EXPECT_NE(latent.find("34521 tokens/GiB"), std::string::npos) << latent;
  EXPECT_NE(latent.find("100 blocks of 16 tokens = 1600 tokens"), std::string::npos) << latent;
  // SmolLM2-135M, F16: 2 x 30 x 192 x 2 = 23040 bytes a token.
  const std::string kv = describe_kv_pool(KVCacheSpec{KVCacheShape::key_value(30, 3, 64), 16, DType::F16}, 182);
  EXPECT_NE(kv.find("KeyValue"), std::string::npos) << kv;
  EXPECT_NE(kv.find("23040 bytes/token"), std::string::npos) << kv;
  EXPECT_NE(kv.find("46603 tokens/GiB"), std::string::npos) << kv;
}

}  // namespace
}  // namespace db

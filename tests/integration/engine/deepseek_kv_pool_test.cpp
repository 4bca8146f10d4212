// The engine's KV pool for deepseek2 models: MLA caches one latent row per token
// and layer (the compressed KV of kv_lora_rank values and the shared rope key of
// qk_rope_dim), so a token costs n_layers * (kv_lora_rank + qk_rope_dim) elements,
// not the 2 * n_layers * n_heads * head_dim of separate per-head K and V (Q8_0:
// rows of whole 32-element blocks).
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>

#include "deepseek_bundles.h"
#include "engine/engine.h"
#include "engine/engine_core.h"

namespace db::test {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// " <n><unit>": a whole number in the summary, not the tail of a longer one.
std::string quantity(size_t n, const char* unit) {
  std::string q = " ";
  q += std::to_string(n);
  q += unit;
  return q;
}

TEST(DeepseekKvPool, ReportsLatentBytesPerToken) {
  for (const auto& [fixture, format] : {std::pair{"deepseek_v2_tiny", "q8_0"}, std::pair{"deepseek_v3_tiny", "f32"}}) {
    ModelBundle& bundle = deepseek_bundle(fixture, format);
    const ModelConfig& mc = bundle.model().config();
    const size_t elements = static_cast<size_t>(mc.n_layers) * (mc.mla.kv_lora_rank + mc.mla.qk_rope_dim);
    ASSERT_EQ(elements, size_t{3} * (32 + 8)) << fixture;  // the fixtures' config (gen_deepseek_fixtures.py)
    for (const DType dtype : {DType::F16, DType::BF16, DType::F32, DType::Q8_0})
      for (const int block_size : {16, 64}) {
        SCOPED_TRACE(std::string(fixture) + " " + dtype_name(dtype) + " block size " + std::to_string(block_size));
        // A row of 40: 80 bytes in F16 / BF16, 160 in F32, two 34-byte blocks in Q8_0.
        const size_t row_bytes = dtype == DType::F32 ? 160 : dtype == DType::Q8_0 ? 68 : 80;
        const size_t per_token = static_cast<size_t>(mc.n_layers) * row_bytes;
        EngineConfig cfg;
        cfg.threads = 1;
        cfg.kv_dtype = dtype;
        cfg.block_size = block_size;
        // 100 blocks and a remainder smaller than one block, which the pool leaves unused.
        cfg.kv_cache_memory = static_cast<int64_t>(per_token * static_cast<size_t>(block_size) * 100 + per_token);
        EXPECT_EQ(engine_kv_cache_spec(bundle.model(), cfg).bytes_per_token(), per_token);

        Engine engine(bundle, cfg);
        const std::string summary = engine.kv_cache_summary();
        EXPECT_TRUE(contains(summary, "Latent")) << summary;
        EXPECT_TRUE(contains(summary, quantity(per_token, " bytes/token"))) << summary;
        EXPECT_TRUE(contains(summary, quantity((size_t{1} << 30) / per_token, " tokens/GiB"))) << summary;
        EXPECT_TRUE(contains(summary, quantity(100, " blocks of ") + std::to_string(block_size) + " tokens"))
            << summary;
        const EngineStats stats = engine.stats();
        EXPECT_EQ(stats.num_blocks, 100);
        EXPECT_EQ(stats.free_blocks, 99);  // all but the null block
      }
  }
}

}  // namespace
}  // namespace db::test

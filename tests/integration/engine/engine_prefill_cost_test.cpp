// Pricing prompt chunks by cost changes how a long prompt is split into steps,
// never what it computes: a long prompt beside short requests gives the same
// greedy tokens whether its chunks are sized by tokens, by the model's MAC
// ratio or by the rate fitted from step times, while the cost-priced runs take
// more, smaller chunks.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine_test_util.h"

namespace db::test {
namespace {

std::vector<int32_t> random_prompt_for_cost_test(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> token(300, 40000);
  std::vector<int32_t> p(static_cast<size_t>(n));
  for (int32_t& t : p) t = token(rng);
  return p;
}

EngineConfig cost_test_config(PrefillCostMode mode) {
  EngineConfig cfg;
  cfg.threads = 2;
  cfg.max_num_seqs = 8;
  cfg.max_num_batched_tokens = 256;
  cfg.long_prefill_threshold = 128;  // shared chunks: 16 tokens at position 0
  cfg.kv_cache_memory = int64_t{64} << 20;
  cfg.prefill_cost = mode;
  return cfg;
}

TEST(EnginePrefillCost, ChunkingByCostNeverChangesTheTokens) {
  std::vector<EngineRequest> reqs;
  reqs.push_back(greedy_request(random_prompt_for_cost_test(1, 1600), 4));
  for (uint32_t k = 0; k < 3; ++k) reqs.push_back(greedy_request(random_prompt_for_cost_test(10 + k, 16), 16));
  EngineStats by_tokens, by_shape, fitted;
  const std::vector<RequestResult> a = run_batch(cost_test_config(PrefillCostMode::Tokens), reqs, &by_tokens);
  const std::vector<RequestResult> b = run_batch(cost_test_config(PrefillCostMode::Shape), reqs, &by_shape);
  const std::vector<RequestResult> c = run_batch(cost_test_config(PrefillCostMode::Fitted), reqs, &fitted);
  ASSERT_EQ(a.size(), reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    ASSERT_EQ(a[i].samples.size(), 1u);
    EXPECT_EQ(a[i].samples[0].tokens.size(), static_cast<size_t>(reqs[i].max_tokens)) << "request " << i;
    EXPECT_EQ(b[i].samples[0].tokens, a[i].samples[0].tokens) << "request " << i << ", chunks by MAC ratio";
    EXPECT_EQ(c[i].samples[0].tokens, a[i].samples[0].tokens) << "request " << i << ", chunks by fitted cost";
  }
  // 1600 tokens: chunks of 128 by tokens alone; priced by cost, the deeper ones are smaller.
  EXPECT_GT(by_shape.steps, by_tokens.steps);
  EXPECT_GE(fitted.steps, by_tokens.steps);
}

}  // namespace
}  // namespace db::test

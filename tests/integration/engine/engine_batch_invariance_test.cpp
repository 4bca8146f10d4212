// Batch invariance on the default model: a request's greedy tokens alone (an
// engine with nothing else in flight) are exactly its tokens inside a batch of
// 64 mixed-length requests, whatever the chunking, prefix caching, block size
// or preemption by recompute.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "engine_test_util.h"

namespace db::test {
namespace {

constexpr int32_t kAloneTokens = 16;  // generated alone; batch requests take 12..16 of them
constexpr int kBatch = 64;

std::string long_text(int sentences) {
  static const char* kParts[] = {
      "The river bends twice before it reaches the old mill, where the water slows and turns green. ",
      "Farmers bring their grain there every autumn, and the miller counts each sack by hand. ",
      "In winter the wheel stops, the pond freezes, and children skate across it after school. ",
      "Nobody remembers who built the mill, but the stones of its walls carry the marks of many tools. ",
  };
  std::string s;
  for (int i = 0; i < sentences; ++i) s += kParts[i % 4];
  return s;
}

const std::vector<std::string>& prompt_texts() {
  static const std::vector<std::string> texts = {
      "The capital of France is",
      "1, 2, 3, 4, 5,",
      "Once upon a time, in a small village by the sea, there lived",
      "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
      "Here is a list of fruits: apple, banana, cherry,",
      long_text(3) + "What happens in winter?",
      "Translate to French: Good morning, how are you today?",
      long_text(6) + "Summarize the story in one sentence:",
      "Q: What is the boiling point of water at sea level?\nA:",
      "The three primary colors are",
      long_text(9) + "The miller's name was",
      "A haiku about autumn leaves:\n",
  };
  return texts;
}

std::vector<EngineRequest> base_requests() {
  std::vector<EngineRequest> reqs;
  for (const std::string& t : prompt_texts())
    reqs.push_back(greedy_request(default_bundle()->encode_prompt(t), kAloneTokens));
  return reqs;
}

// 64 requests over the base prompts, with varied lengths and priorities.
std::vector<EngineRequest> batch_requests(const std::vector<EngineRequest>& base) {
  std::vector<EngineRequest> reqs;
  for (int i = 0; i < kBatch; ++i) {
    EngineRequest r = base[static_cast<size_t>(i) % base.size()];
    r.max_tokens = 12 + (i * 3) % 5;
    r.priority = i % 3;
    reqs.push_back(std::move(r));
  }
  return reqs;
}

struct Case {
  const char* name;
  int budget;           // max_num_batched_tokens
  int threshold;        // long_prefill_threshold (0 = auto)
  bool prefix_caching;  // enable_prefix_caching
  int kv_blocks;        // KV pool size; 0 = plenty, else small enough to force preemption
};

// One batch of 64 under `c`, compared with the results alone.
void expect_batch_matches_alone(int block_size, const Case& c, const std::vector<EngineRequest>& base,
                                const std::vector<RequestResult>& alone) {
  SCOPED_TRACE(std::string(c.name) + ", block size " + std::to_string(block_size));
  EngineConfig cfg;
  cfg.block_size = block_size;
  cfg.max_num_seqs = kBatch;
  cfg.max_num_batched_tokens = c.budget;
  cfg.long_prefill_threshold = c.threshold;
  cfg.enable_prefix_caching = c.prefix_caching;
  cfg.kv_cache_memory = kv_bytes_for_blocks(cfg, c.kv_blocks ? c.kv_blocks : 1 + kBatch * 512 / block_size);
  EngineStats stats;
  const std::vector<EngineRequest> reqs = batch_requests(base);
  const std::vector<RequestResult> got = run_batch(cfg, reqs, &stats);

  for (size_t i = 0; i < reqs.size(); ++i) {
    const std::vector<int32_t>& ref = alone[i % base.size()].samples[0].tokens;
    const std::vector<int32_t> want(ref.begin(), ref.begin() + reqs[i].max_tokens);
    ASSERT_EQ(got[i].samples.size(), 1u);
    EXPECT_EQ(got[i].samples[0].tokens, want) << "request " << i << " (prompt " << i % base.size() << ")";
    EXPECT_EQ(got[i].samples[0].finish, FinishReason::Length);
    EXPECT_EQ(got[i].finals, 1);
  }
  std::printf("[ stats ] %s bs%d: steps %lld, prompt tokens %lld, cached %lld, preemptions %lld\n", c.name,
              block_size, static_cast<long long>(stats.steps), static_cast<long long>(stats.prompt_tokens),
              static_cast<long long>(stats.cached_prompt_tokens), static_cast<long long>(stats.preemptions));
  if (c.kv_blocks) {
    EXPECT_GT(stats.preemptions, 0) << "the KV budget was meant to force preemption";
  }
  if (c.prefix_caching) {
    EXPECT_GT(stats.cached_prompt_tokens, 0);
  }
  if (!c.prefix_caching) {
    EXPECT_EQ(stats.cached_prompt_tokens, 0);
  }
  EXPECT_EQ(stats.free_blocks, stats.num_blocks - 1);
}

class EngineBatchInvariance : public ::testing::TestWithParam<int> {};

// Per block size: the base requests alone once, then the batch under each case.
TEST_P(EngineBatchInvariance, EachRequestMatchesItsOutputAlone) {
  const int block_size = GetParam();
  ASSERT_NE(default_bundle(), nullptr);
  const std::vector<EngineRequest> base = base_requests();
  EngineConfig alone_cfg;
  alone_cfg.block_size = block_size;
  alone_cfg.kv_cache_memory = kv_bytes_for_blocks(alone_cfg, 1 + 2048 / block_size);
  const std::vector<RequestResult> alone = run_alone(alone_cfg, base);
  for (const RequestResult& r : alone) ASSERT_EQ(r.samples.at(0).tokens.size(), size_t(kAloneTokens));

  std::vector<Case> cases;
  if (block_size == 16) {
    cases = {{"Budget16_PrefixCache", 16, 0, true, 0},
             {"Threshold16_NoPrefixCache", 512, 16, false, 0},
             {"Preemption_PrefixCache", 256, 0, true, 40}};
  } else {
    cases = {{"Budget16_PrefixCache", 16, 0, true, 0}, {"Preemption_Threshold16_NoPrefixCache", 256, 16, false, 12}};
  }
  for (const Case& c : cases) expect_batch_matches_alone(block_size, c, base, alone);
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, EngineBatchInvariance, ::testing::Values(16, 64),
                         [](const ::testing::TestParamInfo<int>& info) { return "BS" + std::to_string(info.param); });

}  // namespace
}  // namespace db::test

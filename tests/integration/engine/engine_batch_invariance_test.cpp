// Batch invariance on the default model: a request's greedy tokens alone (an
// engine with nothing else in flight) are exactly its tokens inside a batch of
// 64 mixed-length requests, whatever the chunking, prefix caching, block size
// or preemption by recompute, and whatever drafts speculation verifies.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "batch_invariance_check.h"

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
std::vector<BatchEntry> batch_requests(const std::vector<EngineRequest>& base) {
  std::vector<BatchEntry> batch;
  for (int i = 0; i < kBatch; ++i) {
    BatchEntry e{base[static_cast<size_t>(i) % base.size()], static_cast<size_t>(i) % base.size()};
    e.request.max_tokens = 12 + (i * 3) % 5;
    e.request.priority = i % 3;
    batch.push_back(std::move(e));
  }
  return batch;
}

// Run time (these are among the suite's slowest, tests/README.md): each test decodes the
// 12 prompts alone and the 64-request batch under every case of expect_batch_invariance
// (3 at block size 16, 2 at 64), with the small pools and budgets that force preemption
// and chunking; with a draft model every token also costs the draft's forward passes.
// 64 is the batch size the guarantee is stated for.
class EngineBatchInvariance : public ::testing::TestWithParam<int> {};

// Per block size: the base requests alone once, then the batch under each case.
TEST_P(EngineBatchInvariance, EachRequestMatchesItsOutputAlone) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg;
  cfg.block_size = GetParam();
  const std::vector<EngineRequest> base = base_requests();
  expect_batch_invariance(*default_bundle(), cfg, base, batch_requests(base));
}

// The same with prompt-lookup drafts on every decode that has some (not only
// where they pay): verification and KV rollback must not change a token.
TEST_P(EngineBatchInvariance, EachRequestMatchesItsOutputAloneWithNgramDrafts) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg;
  cfg.block_size = GetParam();
  cfg.speculative.method = "ngram";
  cfg.speculative.num_tokens = 4;
  cfg.speculative.ngram_min = 1;
  cfg.speculative.adaptive = false;
  const std::vector<EngineRequest> base = base_requests();
  expect_batch_invariance(*default_bundle(), cfg, base, batch_requests(base));
}

// And with a draft model's drafts (the default model requantized to Q4_0): its
// own KV cache rolls back past rejected drafts, and is dropped and rebuilt when
// its store is full or the sequence is preempted.
TEST_P(EngineBatchInvariance, EachRequestMatchesItsOutputAloneWithDraftModelDrafts) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg;
  cfg.block_size = GetParam();
  cfg.speculative.method = "draft_model";
  cfg.speculative.model = default_model_as(DType::Q4_0);
  cfg.speculative.num_tokens = 4;
  cfg.speculative.adaptive = false;
  const std::vector<EngineRequest> base = base_requests();
  expect_batch_invariance(*default_bundle(), cfg, base, batch_requests(base));
}

// With an int8 KV cache: a row's blocks are quantized from that row alone, so
// batching, chunked prefill, preemption and prefix hits still change nothing.
TEST_P(EngineBatchInvariance, EachRequestMatchesItsOutputAloneWithInt8Kv) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg;
  cfg.block_size = GetParam();
  cfg.kv_dtype = DType::Q8_0;
  const std::vector<EngineRequest> base = base_requests();
  expect_batch_invariance(*default_bundle(), cfg, base, batch_requests(base));
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, EngineBatchInvariance, ::testing::Values(16, 64),
                         [](const ::testing::TestParamInfo<int>& info) { return "BS" + std::to_string(info.param); });

}  // namespace
}  // namespace db::test

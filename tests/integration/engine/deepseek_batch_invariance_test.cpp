// Batch invariance on the tiny DeepSeek models (MLA with a latent paged KV cache,
// MoE routing): each request's greedy tokens alone equal its tokens, and those of
// each of its n > 1 forks, inside a batch of 64 requests of 3..120 prompt tokens,
// whatever the chunking, prefix caching, block size or preemption by recompute.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "batch_invariance_check.h"
#include "deepseek_bundles.h"
#include "engine/engine.h"
#include "util/error.h"
#include "model/gguf_convert.h"
#include "scratch_dir.h"

namespace db::test {
namespace {

constexpr int32_t kDeepseekAloneTokens = 16;  // generated alone; batch requests take 6..16 of them
constexpr int kDeepseekBatch = 64;

// Fixed random prompts of token ids 3..255 (0..2 are the fixtures' special ids).
// Some share a 96- or 40-token prefix so that prefix caching hits across prompts.
std::vector<EngineRequest> deepseek_base_requests() {
  std::mt19937 rng(20250611);
  auto tokens = [&](int n) {
    std::vector<int32_t> t;
    for (int i = 0; i < n; ++i) t.push_back(static_cast<int32_t>(3 + rng() % 253));
    return t;
  };
  const std::vector<int32_t> long_prefix = tokens(96), short_prefix = tokens(40);
  const std::vector<int32_t> none;
  const std::vector<std::pair<const std::vector<int32_t>*, int>> specs = {
      {&none, 3},         {&none, 7},  {&long_prefix, 5},   {&none, 12},       {&short_prefix, 9}, {&none, 21},
      {&long_prefix, 24}, {&none, 34}, {&short_prefix, 30}, {&long_prefix, 0}, {&none, 58},        {&short_prefix, 65},
  };
  std::vector<EngineRequest> reqs;
  for (const auto& [prefix, suffix] : specs) {
    std::vector<int32_t> prompt = *prefix;
    const std::vector<int32_t> tail = tokens(suffix);
    prompt.insert(prompt.end(), tail.begin(), tail.end());
    reqs.push_back(greedy_request(std::move(prompt), kDeepseekAloneTokens));
  }
  return reqs;
}

// 64 requests over the base prompts with varied lengths and priorities; nine ask
// for n = 3 greedy samples and five more for n = 2.
std::vector<BatchEntry> deepseek_batch_requests(const std::vector<EngineRequest>& base) {
  std::vector<BatchEntry> batch;
  for (int i = 0; i < kDeepseekBatch; ++i) {
    const size_t a = static_cast<size_t>(i) % base.size();
    BatchEntry e{base[a], a};
    e.request.max_tokens = 6 + (i * 5) % 11;
    e.request.priority = (i / 2) % 3;
    e.request.n = i % 7 == 3 ? 3 : i % 11 == 5 ? 2 : 1;
    batch.push_back(std::move(e));
  }
  return batch;
}

struct ModelParam {
  const char* label;
  const char* fixture;
  const char* format;
  DType kv_dtype;
};
void PrintTo(const ModelParam& m, std::ostream* os) { *os << m.label; }

// V2 (softmax router, no q compression) and V3 (sigmoid router with bias, q_lora),
// in F32 and Q8_0 and with each KV dtype. Q8_0 also rounds activations to 8 bits,
// which turns the smallest numeric difference between schedules into other tokens
// most readily.
const ModelParam kModels[] = {
    {"V2_q8_0_kvF16", "deepseek_v2_tiny", "q8_0", DType::F16},
    {"V3_f32_kvF32", "deepseek_v3_tiny", "f32", DType::F32},
    {"V3_q8_0_kvBF16", "deepseek_v3_tiny", "q8_0", DType::BF16},
    {"V3_f32_kvQ8_0", "deepseek_v3_tiny", "f32", DType::Q8_0},
};

using Param = std::tuple<ModelParam, int>;  // model, block size

class DeepseekBatchInvariance : public ::testing::TestWithParam<Param> {};

// Per model and block size: the base requests alone once, then the batch under each case.
TEST_P(DeepseekBatchInvariance, EachRequestMatchesItsOutputAlone) {
  const auto& [model, block_size] = GetParam();
  ModelBundle& bundle = deepseek_bundle(model.fixture, model.format);
  ASSERT_EQ(bundle.model().config().arch, "deepseek2");
  EngineConfig cfg;
  cfg.threads = 2;
  cfg.block_size = block_size;
  cfg.kv_dtype = model.kv_dtype;
  const std::vector<EngineRequest> base = deepseek_base_requests();
  expect_batch_invariance(bundle, cfg, base, deepseek_batch_requests(base));
}

// Speculation with `spec` (drafting on every decode that can, K = 4) on the
// model whose tokens turn most readily (V3, Q8_0 activations), at both block
// sizes: verification computes a decode as a multi-token chunk, which must not
// change its logits.
void expect_invariance_speculating(SpeculativeConfig spec, ModelBundle* with = nullptr) {
  const ModelParam& model = kModels[2];
  ModelBundle& bundle = with ? *with : deepseek_bundle(model.fixture, model.format);
  spec.num_tokens = 4;
  spec.adaptive = false;
  for (int block_size : {16, 64}) {
    EngineConfig cfg;
    cfg.threads = 2;
    cfg.block_size = block_size;
    cfg.kv_dtype = model.kv_dtype;
    cfg.speculative = spec;
    const std::vector<EngineRequest> base = deepseek_base_requests();
    expect_batch_invariance(bundle, cfg, base, deepseek_batch_requests(base));
  }
}

TEST(DeepseekSpeculation, EachRequestMatchesItsPlainOutputAloneWithNgramDrafts) {
  SpeculativeConfig spec;
  spec.method = "ngram";
  spec.ngram_min = 1;
  expect_invariance_speculating(spec);
}

// With a draft model of MLA and MoE layers too: the same fixture requantized
// to Q4_0, on its own latent KV cache.
TEST(DeepseekSpeculation, EachRequestMatchesItsPlainOutputAloneWithDraftModelDrafts) {
  const ModelParam& model = kModels[2];
  const ScratchDir dir("deepseek_draft");
  SpeculativeConfig spec;
  spec.method = "draft_model";
  spec.model = dir.file("draft-q4_0.gguf");
  convert_gguf(deepseek_model_file(model.fixture, model.format), spec.model, DType::Q4_0);
  expect_invariance_speculating(spec);
}

// With the drafts of a multi-token-prediction layer (deepseek_mtp_file(): a
// one-block V3 model whose MTP layer repeats its block), on its one-layer
// latent cache, fed from the target's hidden states of every step.
TEST(DeepseekSpeculation, EachRequestMatchesItsPlainOutputAloneWithMtpDrafts) {
  SpeculativeConfig spec;
  spec.method = "mtp";
  expect_invariance_speculating(spec, &deepseek_mtp_bundle());
}

TEST(DeepseekSpeculation, MtpOnAModelWithoutTheLayerIsRefusedClearly) {
  EngineConfig cfg;
  cfg.threads = 1;
  cfg.kv_cache_memory = 1 << 20;
  cfg.speculative.method = "mtp";
  ModelBundle& bundle = deepseek_bundle("deepseek_v3_tiny", "f32");
  try {
    Engine engine(bundle, cfg);
    FAIL() << "an engine drafting with a layer the model lacks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no multi-token-prediction layer"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DeepseekBatchInvariance,
                         ::testing::Combine(::testing::ValuesIn(kModels), ::testing::Values(16, 64)),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(std::get<0>(info.param).label) + "_BS" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace db::test

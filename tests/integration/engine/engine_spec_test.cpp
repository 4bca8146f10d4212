// Speculative decoding on the default model changes no output, with either
// proposer (prompt lookup; a draft model: the default model requantized to
// Q4_0, which disagrees with it often enough to exercise rejections): seeded
// sampling (n = 1 and n > 1, with penalties and logprobs), constrained decoding
// and stop strings give exactly the tokens, logprobs and text of plain
// decoding, the counters add up and every KV block is back at the end. A draft
// model of another vocabulary is refused with a clear error. (Greedy batches
// across block sizes, prefix caching and preemption:
// engine_batch_invariance_test.cpp.)
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "grammar/constraint_compiler.h"
#include "util/error.h"

namespace db::test {
namespace {

const char* kStory =
    "The river bends twice before it reaches the old mill, where the water slows and turns green. Farmers bring "
    "their grain there every autumn, and the miller counts each sack by hand. In winter the wheel stops, the pond "
    "freezes, and children skate across it after school.";

EngineRequest rewrite_request(const std::string& instruction, int32_t max_tokens) {
  EngineRequest r;
  r.prompt = default_bundle()->encode_chat({{"user", instruction + "\n\n" + kStory}});
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

EngineConfig drafting(const std::string& method, int32_t k = 4) {
  EngineConfig cfg;
  cfg.speculative.method = method;
  cfg.speculative.num_tokens = k;
  cfg.speculative.ngram_min = 1;
  if (method == "draft_model") cfg.speculative.model = default_model_as(DType::Q4_0);
  cfg.speculative.adaptive = false;  // draft whenever the proposer can, so every path runs
  return cfg;
}

void expect_same_samples(const std::vector<RequestResult>& plain, const std::vector<RequestResult>& spec) {
  ASSERT_EQ(plain.size(), spec.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    ASSERT_EQ(plain[i].samples.size(), spec[i].samples.size()) << "request " << i;
    for (size_t s = 0; s < plain[i].samples.size(); ++s) {
      const SampleResult &a = plain[i].samples[s], &b = spec[i].samples[s];
      EXPECT_EQ(a.tokens, b.tokens) << "request " << i << " sample " << s << "\n" << a.text << "\n---\n" << b.text;
      EXPECT_EQ(a.text, b.text) << "request " << i << " sample " << s;
      EXPECT_EQ(a.logprobs, b.logprobs) << "request " << i << " sample " << s;
      EXPECT_EQ(a.top_logprobs, b.top_logprobs) << "request " << i << " sample " << s;
      EXPECT_EQ(a.finish, b.finish) << "request " << i << " sample " << s;
      EXPECT_EQ(a.stop_reason, b.stop_reason) << "request " << i << " sample " << s;
    }
    EXPECT_EQ(spec[i].finals, 1) << "request " << i;
  }
}

void expect_counters_add_up(const EngineStats& s, const std::string& method) {
  EXPECT_EQ(s.spec.proposer, method);
  EXPECT_GT(s.spec.num_drafts, 0);
  EXPECT_GT(s.spec.num_accepted_tokens, 0);
  EXPECT_LT(s.spec.num_accepted_tokens, s.spec.num_draft_tokens);
  EXPECT_EQ(s.spec.num_emitted_tokens, s.spec.num_accepted_tokens + s.spec.num_drafts);
  EXPECT_EQ(std::accumulate(s.spec.accepted_per_position.begin(), s.spec.accepted_per_position.end(), int64_t{0}),
            s.spec.num_accepted_tokens);
  EXPECT_LE(s.spec.accepted_per_position.at(0), s.spec.num_drafts);
  EXPECT_EQ(s.free_blocks, s.num_blocks - 1) << "every block back in the pool";
  EXPECT_EQ(s.spec.proposer_kv_blocks, 0) << "every block of the draft model's cache back";
}

// Runs `reqs` in one batch plainly and with drafts; expects the same samples and counters that add up.
std::vector<RequestResult> expect_drafts_change_nothing(const std::vector<EngineRequest>& reqs,
                                                        const std::string& method, int32_t k = 4) {
  EngineStats stats;
  const std::vector<RequestResult> plain = run_batch(EngineConfig{}, reqs);
  const std::vector<RequestResult> spec = run_batch(drafting(method, k), reqs, &stats);
  expect_same_samples(plain, spec);
  expect_counters_add_up(stats, method);
  return spec;
}

class EngineSpeculation : public ::testing::TestWithParam<std::string> {};  // the method

TEST_P(EngineSpeculation, SeededSamplingGivesTheSameTokensAndLogprobs) {
  ASSERT_NE(default_bundle(), nullptr);
  std::vector<EngineRequest> reqs;
  for (int i = 0; i < 6; ++i) {
    EngineRequest r = rewrite_request("Rewrite this text in your own words:", 48);
    r.sampling.temperature = 0.3f + 0.2f * static_cast<float>(i % 3);
    r.sampling.top_p = i % 2 ? 0.9f : 1.0f;
    r.sampling.seed = 1000 + i;
    r.sampling.repetition_penalty = i == 4 ? 1.1f : 1.0f;
    r.sampling.logprobs = 2;
    r.n = i % 3 == 0 ? 2 : 1;
    reqs.push_back(r);
  }
  const std::vector<RequestResult> spec = expect_drafts_change_nothing(reqs, GetParam());
  ASSERT_EQ(spec[1].samples.at(0).logprobs.size(), spec[1].samples[0].tokens.size());
  EXPECT_EQ(spec[1].samples[0].top_logprobs.at(0).size(), 2u);
}

TEST_P(EngineSpeculation, ConstrainedOutputsAreTheSame) {
  ASSERT_NE(default_bundle(), nullptr);
  GrammarSpec object;
  object.kind = GrammarSpec::Kind::JsonObject;
  const auto json = default_bundle()->constraint_compiler().compile(object);
  std::vector<EngineRequest> reqs;
  for (int i = 0; i < 4; ++i) {
    EngineRequest r = rewrite_request("Give the facts of this text as a JSON object with short string values:", 96);
    r.sampling.constraint = json;
    if (i % 2) {
      r.sampling.temperature = 0.7f;
      r.sampling.seed = 7 + i;
    }
    reqs.push_back(r);
  }
  expect_drafts_change_nothing(reqs, GetParam());
}

// Several accepted tokens arrive in one output: a stop string completed by one
// of them ends the text there and drops the tokens after it, as plain decoding
// (one token per step) does.
TEST_P(EngineSpeculation, StopStringsSeeExactlyTheTokensPlainDecodingSees) {
  ASSERT_NE(default_bundle(), nullptr);
  const EngineRequest base = rewrite_request("Rewrite the following text exactly, but in all lowercase letters:", 64);
  const SampleResult full = run_batch(EngineConfig{}, {base}).front().samples.at(0);
  ASSERT_GT(full.text.size(), 120u) << full.text;
  std::vector<EngineRequest> reqs;
  for (size_t at = 20; at + 8 < full.text.size(); at += 9) {  // stop strings at many places
    EngineRequest r = base;
    r.stop = {full.text.substr(at, 4)};
    reqs.push_back(r);
  }
  expect_drafts_change_nothing(reqs, GetParam(), 8);
}

INSTANTIATE_TEST_SUITE_P(Proposers, EngineSpeculation, ::testing::Values("ngram", "draft_model"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// A request whose deadline passes while it decodes gives the draft model's blocks
// back in that step: the engine, idle after it, takes no further step that could.
TEST(EngineDraftModel, ATimedOutRequestGivesItsDraftBlocksBackAtOnce) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineRequest quick = rewrite_request("Rewrite this text in your own words:", 8);
  EngineRequest slow = rewrite_request("Rewrite this text in your own words:", 4000);
  slow.ignore_eos = true;
  slow.timeout_seconds = 2;
  EngineStats stats;
  const std::vector<RequestResult> res = run_batch(drafting("draft_model"), {quick, slow}, &stats);
  EXPECT_EQ(res.at(1).samples.at(0).finish, FinishReason::Timeout);
  EXPECT_EQ(stats.timeouts, 1);
  EXPECT_EQ(stats.free_blocks, stats.num_blocks - 1);
  EXPECT_EQ(stats.spec.proposer_kv_blocks, 0) << "the timed-out request's draft blocks are still held";
}

TEST(EngineDraftModel, AnotherVocabularyIsRefusedClearly) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg = drafting("draft_model");
  cfg.speculative.model = DB_SOURCE_DIR "/tests/data/tokenizer/deepseek-r1-distill-qwen/vocab.gguf";
  try {
    run_batch(cfg, {greedy_request({1, 2, 3}, 4)});
    ADD_FAILURE() << "a draft model of another vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must share the target's vocabulary"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("vocab.gguf"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace db::test

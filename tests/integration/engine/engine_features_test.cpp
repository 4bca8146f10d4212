// Engine features on the default model: a shared system prompt computed once,
// stop strings and stop tokens, n > 1 sampling with seeds, abort, validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "engine_test_util.h"
#include "util/error.h"

namespace db::test {
namespace {

EngineConfig small_config(int64_t blocks = 512) {
  EngineConfig cfg;
  cfg.kv_cache_memory = kv_bytes_for_blocks(cfg, blocks);
  return cfg;
}

std::string system_prompt() {
  std::string s = "You are a careful assistant for a small farming cooperative. ";
  for (int i = 0; i < 25; ++i)
    s += "Rule " + std::to_string(i + 1) + ": answer plainly, cite the ledger entry, and never guess a harvest figure. ";
  return s + "\n\n";
}

TEST(EngineFeatures, SharedSystemPromptIsComputedOnce) {
  ASSERT_NE(default_bundle(), nullptr);
  const std::string system = system_prompt();
  const std::vector<int32_t> system_ids = default_bundle()->encode_prompt(system);
  std::vector<EngineRequest> reqs;
  const char* questions[] = {"How many sacks came in?", "Who owns the mill?", "What is the rule on guessing?",
                             "When does the pond freeze?", "Name one rule.", "Is the ledger complete?",
                             "What did the miller count?", "Summarize the rules."};
  for (const char* q : questions) reqs.push_back(greedy_request(default_bundle()->encode_prompt(system + q), 4));

  // Tokens every prompt shares with the first one, in whole blocks.
  size_t common = reqs[0].prompt.size();
  for (const EngineRequest& r : reqs) {
    size_t k = 0;
    while (k < common && k < r.prompt.size() && r.prompt[k] == reqs[0].prompt[k]) ++k;
    common = k;
  }
  ASSERT_GE(common, 480u) << "the system prompt should be ~500 tokens";
  EngineConfig cfg = small_config();
  const int64_t shared = static_cast<int64_t>(common) / cfg.block_size * cfg.block_size;

  EngineStats stats;
  const std::vector<RequestResult> got = run_batch(cfg, reqs, &stats);
  int64_t total_prompt = 0, suffixes = 0, cached_sum = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const int64_t len = static_cast<int64_t>(reqs[i].prompt.size());
    total_prompt += len;
    suffixes += len - shared;
    cached_sum += got[i].stats.cached_prompt_tokens;
    EXPECT_EQ(got[i].stats.prompt_tokens, len);
    if (i == 0) {
      EXPECT_EQ(got[i].stats.cached_prompt_tokens, 0);
    }
    if (i > 0) {
      EXPECT_GE(got[i].stats.cached_prompt_tokens, shared) << "request " << i;
    }
  }
  std::printf("[ prefix ] system %zu tokens, %zu requests: computed %lld prompt tokens, %lld from the cache\n",
              system_ids.size(), reqs.size(), static_cast<long long>(stats.prompt_tokens),
              static_cast<long long>(stats.cached_prompt_tokens));
  EXPECT_EQ(stats.prompt_tokens + stats.cached_prompt_tokens, total_prompt);
  EXPECT_EQ(stats.cached_prompt_tokens, cached_sum);
  EXPECT_LE(stats.prompt_tokens, shared + suffixes);  // the shared part once, the rest per request
  EXPECT_EQ(stats.free_blocks, stats.num_blocks - 1);
}

class EngineStops : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(default_bundle(), nullptr);
    base_ = greedy_request(default_bundle()->encode_prompt("Once upon a time, in a small village by the sea, there lived"), 24);
    full_ = run_batch(small_config(), {base_}).front().samples.at(0);
    ASSERT_EQ(full_.tokens.size(), 24u);
    ASSERT_GT(full_.text.size(), 20u);
  }
  EngineRequest base_;
  SampleResult full_;
};

TEST_F(EngineStops, StopStringEndsTheTextBeforeIt) {
  const std::string stop = full_.text.substr(full_.text.size() / 2, 3);
  const size_t at = full_.text.find(stop);
  EngineRequest r = base_;
  r.stop = {"never-there", stop};
  const SampleResult got = run_batch(small_config(), {r}).front().samples.at(0);
  EXPECT_EQ(got.text, full_.text.substr(0, at));
  EXPECT_EQ(got.finish, FinishReason::Stop);
  EXPECT_EQ(got.stop_reason, stop);
  ASSERT_LE(got.tokens.size(), full_.tokens.size());
  EXPECT_TRUE(std::equal(got.tokens.begin(), got.tokens.end(), full_.tokens.begin()));
  EXPECT_LT(got.tokens.size(), full_.tokens.size());
}

TEST_F(EngineStops, AbsentStopStringChangesNothing) {
  EngineRequest r = base_;
  r.stop = {"\x01never"};
  const SampleResult got = run_batch(small_config(), {r}).front().samples.at(0);
  EXPECT_EQ(got.text, full_.text);
  EXPECT_EQ(got.tokens, full_.tokens);
  EXPECT_EQ(got.finish, FinishReason::Length);
}

TEST_F(EngineStops, StopTokenIsDeliveredWithoutItsText) {
  EngineRequest r = base_;
  const int32_t stop_id = full_.tokens[6];
  r.stop_token_ids = {stop_id};
  const SampleResult got = run_batch(small_config(), {r}).front().samples.at(0);
  const size_t first = static_cast<size_t>(std::find(full_.tokens.begin(), full_.tokens.end(), stop_id) - full_.tokens.begin());
  EXPECT_EQ(got.tokens, std::vector<int32_t>(full_.tokens.begin(), full_.tokens.begin() + first + 1));
  EXPECT_EQ(got.finish, FinishReason::Stop);
  EXPECT_EQ(got.stop_reason, std::to_string(stop_id));
  EXPECT_EQ(got.text, default_bundle()->tokenizer().decode(std::vector<int32_t>(got.tokens.begin(), got.tokens.end() - 1), true));
}

EngineRequest sampled_request(int n, uint64_t seed) {
  EngineRequest r = greedy_request(default_bundle()->encode_prompt("Write a short poem about the sea:"), 16);
  r.sampling.temperature = 0.9f;
  r.sampling.top_p = 0.95f;
  r.sampling.seed = seed;
  r.n = n;
  return r;
}

TEST(EngineSampling, SeededSamplesAreReproducibleAndBatchIndependent) {
  ASSERT_NE(default_bundle(), nullptr);
  const RequestResult a = run_batch(small_config(), {sampled_request(3, 1234)}).front();
  ASSERT_EQ(a.samples.size(), 3u);
  EXPECT_EQ(a.finals, 1);
  for (const SampleResult& s : a.samples) {
    EXPECT_EQ(s.tokens.size(), 16u);
    EXPECT_EQ(s.finish, FinishReason::Length);
  }
  EXPECT_FALSE(a.samples[0].tokens == a.samples[1].tokens && a.samples[1].tokens == a.samples[2].tokens)
      << "three samples at temperature 0.9 came out identical";

  // The same request again, now among others and with small chunks: the same samples.
  EngineConfig busy = small_config();
  busy.max_num_batched_tokens = 16;
  std::vector<EngineRequest> mix = {greedy_request(default_bundle()->encode_prompt("The capital of France is"), 10),
                                    sampled_request(3, 1234), sampled_request(2, 99)};
  EngineStats stats;
  const std::vector<RequestResult> b = run_batch(busy, mix, &stats);
  ASSERT_EQ(b[1].samples.size(), 3u);
  for (int k = 0; k < 3; ++k) EXPECT_EQ(b[1].samples[k].tokens, a.samples[k].tokens) << "sample " << k;
  EXPECT_EQ(stats.free_blocks, stats.num_blocks - 1);

  // Sample 0 of n = 3 is the n = 1 request with the same seed (the forks share the prompt's KV).
  const RequestResult single = run_batch(small_config(), {sampled_request(1, 1234)}).front();
  EXPECT_EQ(single.samples.at(0).tokens, a.samples[0].tokens);
}

TEST(EngineAbort, AbortEndsEveryRequestAndFreesAllBlocks) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg = small_config();
  cfg.max_num_seqs = 3;  // some requests are still waiting when aborted
  Engine engine(*default_bundle(), cfg);
  Collector c;
  std::vector<RequestId> ids;
  for (int i = 0; i < 5; ++i) {
    EngineRequest r = greedy_request(default_bundle()->encode_prompt("Count slowly: one, two, three,"), 400);
    r.n = i == 0 ? 2 : 1;
    ids.push_back(engine.submit(r, c.callback()));
  }
  for (int wait = 0; wait < 600; ++wait) {  // until the first request produced a few tokens
    const auto res = c.results();
    auto it = res.find(ids[0]);
    if (it != res.end() && !it->second.samples.empty() && it->second.samples[0].tokens.size() >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (RequestId id : ids) engine.abort(id);
  engine.abort(987654);  // unknown: ignored
  engine.wait_idle();
  const EngineStats stats = engine.stats();
  EXPECT_EQ(stats.free_blocks, stats.num_blocks - 1);
  EXPECT_EQ(stats.running, 0);
  EXPECT_EQ(stats.waiting, 0);
  const auto res = c.results();
  for (size_t i = 0; i < ids.size(); ++i) {
    const RequestResult& r = res.at(ids[i]);
    EXPECT_EQ(r.finals, 1);
    ASSERT_EQ(r.samples.size(), i == 0 ? 2u : 1u);
    for (const SampleResult& s : r.samples) {
      EXPECT_EQ(s.finish, FinishReason::Abort);
      EXPECT_LT(s.tokens.size(), 400u);
    }
  }
}

TEST(EngineStats, RequestsCountAsWaitingFromTheMomentTheyAreSubmitted) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg = small_config();
  cfg.max_num_seqs = 1;  // one runs, the others wait
  Engine engine(*default_bundle(), cfg);
  Collector c;
  std::vector<RequestId> ids;
  const int priorities[] = {2, 1, 2, 0};
  for (int p : priorities) {
    EngineRequest r = greedy_request(default_bundle()->encode_prompt("Count slowly: one, two, three,"), 400);
    r.priority = p;
    ids.push_back(engine.submit(r, c.callback()));
    // Whether or not the step thread has taken it in yet, the request is counted at once.
    const EngineStats s = engine.stats();
    EXPECT_EQ(s.running + s.waiting, static_cast<int64_t>(ids.size()));
  }
  const EngineStats s = engine.stats();
  EXPECT_EQ(s.running_by_priority[0] + s.waiting_by_priority[0], 1);
  EXPECT_EQ(s.running_by_priority[1] + s.waiting_by_priority[1], 1);
  EXPECT_EQ(s.running_by_priority[2] + s.waiting_by_priority[2], 2);
  for (RequestId id : ids) engine.abort(id);
  engine.wait_idle();
  const EngineStats end = engine.stats();
  EXPECT_EQ(end.running + end.waiting, 0);
  EXPECT_EQ(end.waiting_by_priority[0] + end.waiting_by_priority[1] + end.waiting_by_priority[2], 0);
}

TEST(EngineAbort, DestroyingTheEngineAbortsWhatIsLeft) {
  ASSERT_NE(default_bundle(), nullptr);
  Collector c;
  RequestId id = 0;
  {
    Engine engine(*default_bundle(), small_config());
    id = engine.submit(greedy_request(default_bundle()->encode_prompt("Count slowly: one, two,"), 400), c.callback());
  }
  const RequestResult r = c.results().at(id);
  EXPECT_EQ(r.finals, 1);
  EXPECT_EQ(r.samples.at(0).finish, FinishReason::Abort);
}

TEST(EngineValidation, InvalidRequestsAreRejectedAtSubmit) {
  ASSERT_NE(default_bundle(), nullptr);
  EngineConfig cfg = small_config(64);
  cfg.max_num_seqs = 4;
  Engine engine(*default_bundle(), cfg);
  Collector c;
  const auto rejects = [&](EngineRequest r, const std::string& what) {
    try {
      engine.submit(std::move(r), c.callback());
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  const EngineRequest ok = greedy_request({1, 2, 3}, 4);
  EngineRequest r = ok;
  r.prompt.clear();
  rejects(r, "prompt is empty");
  r = ok;
  r.prompt = {1, 49152};
  rejects(r, "outside the vocabulary");
  r = ok;
  r.prompt.assign(8192, 1);
  rejects(r, "context");
  r = ok;
  r.max_tokens = 0;
  rejects(r, "max_tokens");
  r = ok;
  r.n = 5;
  rejects(r, "n: must be in [1, 4]");
  r = ok;
  r.sampling.top_p = 0;
  rejects(r, "top_p");
  r = ok;
  r.stop = {""};
  rejects(r, "stop");
  r = ok;
  r.priority = 3;
  rejects(r, "priority");
  r = ok;
  r.max_tokens = 64 * 16;
  rejects(r, "KV blocks");
  engine.wait_idle();
  EXPECT_TRUE(c.results().empty());
  EXPECT_EQ(engine.stats().steps, 0);
}

}  // namespace
}  // namespace db::test

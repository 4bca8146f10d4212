#include "sample/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "util/error.h"

namespace db {
namespace {

SamplingParams greedy_params() {
  SamplingParams p;
  p.temperature = 0.0f;
  return p;
}

// Reference log_softmax in double.
std::vector<double> log_softmax(const std::vector<float>& logits) {
  double max_logit = -INFINITY;
  for (float x : logits) max_logit = std::max<double>(max_logit, x);
  double sum = 0.0;
  for (float x : logits) sum += std::exp(x - max_logit);
  std::vector<double> out;
  for (float x : logits) out.push_back(x - max_logit - std::log(sum));
  return out;
}

// The tokens a seeded sampler draws over `steps` decoding steps from fixed logits.
std::vector<int32_t> draw_sequence(const std::vector<float>& logits, const SamplingParams& p, SamplerState s,
                                   int steps) {
  Sampler sampler;
  std::vector<int32_t> output;
  for (int i = 0; i < steps; ++i)
    output.push_back(sampler.sample(logits.data(), int32_t(logits.size()), p, s, {{}, output}).token);
  return output;
}

const std::vector<float> kLogits = {0.1f, 2.0f, -1.0f, 1.5f, 0.7f, 1.9f, -3.0f, 0.0f};

TEST(Sampler, GreedyIsArgmax) {
  Sampler sampler;
  EXPECT_EQ(sampler.sample(kLogits.data(), 8, greedy_params(), {}, {}).token, 1);
}

TEST(Sampler, LogitBiasShiftsTheChoiceAndKeepsRawLogprobs) {
  SamplingParams p = greedy_params();
  p.logprobs = 0;
  p.logit_bias = {{6, 6.0f}, {1, -100.0f}};  // -3 + 6 = 3 beats everything; token 1 is banned
  Sampler sampler;
  const SampleResult r = sampler.sample(kLogits.data(), 8, p, {}, {});
  EXPECT_EQ(r.token, 6);
  EXPECT_NEAR(*r.logprob, log_softmax(kLogits)[6], 1e-5) << "logprobs are those of the raw logits";
  p.logit_bias = {{1, -100.0f}};
  EXPECT_EQ(sampler.sample(kLogits.data(), 8, p, {}, {}).token, 5) << "the next best once token 1 is banned";
  SamplingParams sampled;
  sampled.logit_bias = {{2, 100.0f}};
  for (uint64_t seed = 0; seed < 20; ++seed) EXPECT_EQ(sampler.sample(kLogits.data(), 8, sampled, {seed, 0}, {}).token, 2);
  p.logit_bias = {{8, 1.0f}};
  EXPECT_THROW(sampler.sample(kLogits.data(), 8, p, {}, {}), Error) << "an id outside the vocabulary";
  p.logit_bias = {{1, 101.0f}};
  EXPECT_THROW(sampler.sample(kLogits.data(), 8, p, {}, {}), Error) << "a bias outside [-100, 100]";
}

TEST(Sampler, AMaskAllowsOnlyItsTokens) {
  std::vector<uint32_t> mask(1, 0u);
  mask[0] = (1u << 3) | (1u << 7);  // tokens 3 (1.5) and 7 (0.0)
  Sampler sampler;
  EXPECT_EQ(sampler.sample(kLogits.data(), 8, greedy_params(), {}, {}, mask).token, 3);
  SamplingParams hot;
  hot.temperature = 2.0f;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const int32_t t = sampler.sample(kLogits.data(), 8, hot, {seed, 0}, {}, mask).token;
    EXPECT_TRUE(t == 3 || t == 7) << t;
  }
  mask[0] = 0;
  EXPECT_THROW(sampler.sample(kLogits.data(), 8, greedy_params(), {}, {}, mask), Error) << "nothing allowed";
}

TEST(Sampler, GreedyTiesGoToLowestId) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, 3.0f};
  Sampler sampler;
  EXPECT_EQ(sampler.sample(logits.data(), 5, greedy_params(), {}, {}).token, 1);
  EXPECT_EQ(argmax(logits.data(), 5), 1);
}

TEST(Sampler, TemperatureBelowEpsilonIsGreedy) {
  SamplingParams p;
  p.temperature = 1e-6f;
  Sampler sampler;
  for (uint64_t seed = 0; seed < 20; ++seed) EXPECT_EQ(sampler.sample(kLogits.data(), 8, p, {seed, 0}, {}).token, 1);
}

TEST(Sampler, TopK1IsGreedyEvenOnTies) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f};
  SamplingParams p;
  p.top_k = 1;
  Sampler sampler;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    EXPECT_EQ(sampler.sample(kLogits.data(), 8, p, {seed, 0}, {}).token, 1);
    EXPECT_EQ(sampler.sample(logits.data(), 4, p, {seed, 0}, {}).token, 1);
  }
}

TEST(Sampler, TinyTopPIsGreedy) {
  SamplingParams p;
  p.top_p = 1e-4f;
  p.temperature = 1.5f;
  Sampler sampler;
  for (uint64_t seed = 0; seed < 50; ++seed) EXPECT_EQ(sampler.sample(kLogits.data(), 8, p, {seed, 0}, {}).token, 1);
}

TEST(Sampler, MinPOneKeepsOnlyTheTopTokens) {
  SamplingParams p;
  p.min_p = 1.0f;
  Sampler sampler;
  for (uint64_t seed = 0; seed < 50; ++seed) EXPECT_EQ(sampler.sample(kLogits.data(), 8, p, {seed, 0}, {}).token, 1);
}

TEST(Sampler, MinPFiltersRelativeToTheTopProbability) {
  // Probabilities relative to the top: 1, e^-1, e^-2, e^-3. min_p = 0.2 keeps the first two.
  const std::vector<float> logits = {0.0f, -1.0f, -2.0f, -3.0f};
  SamplingParams p;
  p.min_p = 0.2f;
  Sampler sampler;
  const SamplerState state{99, 0};
  std::vector<int32_t> output(2000, 0);
  int seen[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < output.size(); ++i)
    ++seen[sampler.sample(logits.data(), 4, p, state, {{}, std::span(output).first(i)}).token];
  EXPECT_EQ(seen[2] + seen[3], 0);
  EXPECT_GT(seen[1], 0);
  EXPECT_NEAR(seen[1] / 2000.0, std::exp(-1.0) / (1 + std::exp(-1.0)), 0.04);
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedsDiffer) {
  SamplingParams p;
  p.temperature = 1.2f;
  const auto a = draw_sequence(kLogits, p, {2024, 0}, 64);
  EXPECT_EQ(a, draw_sequence(kLogits, p, {2024, 0}, 64));
  EXPECT_NE(a, draw_sequence(kLogits, p, {2025, 0}, 64));
  EXPECT_NE(a, draw_sequence(kLogits, p, {2024, 1}, 64));
}

TEST(Sampler, ResultDependsOnlyOnTheRowNotTheBatch) {
  SamplingParams p;
  p.top_p = 0.9f;
  const std::vector<SamplerState> states = {{1, 0}, {2, 0}, {3, 0}};
  const std::vector<int32_t> output = {4, 5};
  // Three rows with different logits; sampled as a batch in two orders and alone.
  std::vector<float> rows;
  for (int r = 0; r < 3; ++r)
    for (float x : kLogits) rows.push_back(x * (r + 1) * 0.5f);
  Sampler sampler;
  std::vector<SampleRow> batch;
  for (int r = 0; r < 3; ++r) batch.push_back({&p, &states[r], {{}, output}});
  const auto together = sampler.sample_batch(rows.data(), 8, batch);
  std::vector<float> reversed;
  std::vector<SampleRow> reversed_batch;
  for (int r = 2; r >= 0; --r) {
    reversed.insert(reversed.end(), rows.begin() + r * 8, rows.begin() + (r + 1) * 8);
    reversed_batch.push_back(batch[r]);
  }
  const auto backwards = Sampler().sample_batch(reversed.data(), 8, reversed_batch);
  ASSERT_EQ(together.size(), 3u);
  for (int r = 0; r < 3; ++r) {
    const int32_t alone = Sampler().sample(rows.data() + r * 8, 8, p, states[r], {{}, output}).token;
    EXPECT_EQ(together[r].token, alone);
    EXPECT_EQ(backwards[2 - r].token, alone);
  }
}

TEST(Sampler, LogprobsAreRawLogSoftmax) {
  SamplingParams p;
  p.logprobs = 3;
  p.temperature = 0.7f;
  p.frequency_penalty = 1.0f;  // must not affect the reported logprobs
  const std::vector<int32_t> output = {1, 1, 5};
  const auto ref = log_softmax(kLogits);
  Sampler sampler;
  const SampleResult r = sampler.sample(kLogits.data(), 8, p, {5, 0}, {{}, output});
  ASSERT_TRUE(r.logprob.has_value());
  EXPECT_NEAR(*r.logprob, ref[r.token], 1e-6);
  ASSERT_EQ(r.top_logprobs.size(), 3u);
  const int32_t expected_ids[3] = {1, 5, 3};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(r.top_logprobs[i].token, expected_ids[i]);
    EXPECT_NEAR(r.top_logprobs[i].logprob, ref[expected_ids[i]], 1e-6);
  }
}

TEST(Sampler, LogprobsOnlyWhenRequestedAndTiesToLowerId) {
  const std::vector<float> logits = {1.0f, 2.0f, 2.0f, 0.0f, 2.0f};
  Sampler sampler;
  SampleResult r = sampler.sample(logits.data(), 5, greedy_params(), {}, {});
  EXPECT_FALSE(r.logprob.has_value());
  EXPECT_TRUE(r.top_logprobs.empty());
  SamplingParams p = greedy_params();
  p.logprobs = 0;
  r = sampler.sample(logits.data(), 5, p, {}, {});
  ASSERT_TRUE(r.logprob.has_value());
  EXPECT_NEAR(*r.logprob, log_softmax(logits)[1], 1e-6);
  EXPECT_TRUE(r.top_logprobs.empty());
  p.logprobs = 20;  // more than the vocabulary: all tokens, best first
  r = sampler.sample(logits.data(), 5, p, {}, {});
  ASSERT_EQ(r.top_logprobs.size(), 5u);
  const int32_t expected_ids[5] = {1, 2, 4, 0, 3};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(r.top_logprobs[i].token, expected_ids[i]);
}

TEST(Sampler, MaskedTokensAreNeverDrawn) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {ninf, 0.0f, ninf, 0.0f, ninf};
  SamplingParams p;
  Sampler sampler;
  std::vector<int32_t> output(500, 1);
  for (size_t i = 0; i < output.size(); ++i) {
    const int32_t t = sampler.sample(logits.data(), 5, p, {8, 0}, {{}, std::span(output).first(i)}).token;
    EXPECT_TRUE(t == 1 || t == 3) << t;
  }
}

TEST(Sampler, BadInputsAreErrors) {
  Sampler sampler;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::vector<float> with_nan = {0.0f, nan, 1.0f};
  const std::vector<float> all_masked = {ninf, ninf};
  SamplingParams p;
  EXPECT_THROW(sampler.sample(with_nan.data(), 3, p, {}, {}), Error);
  EXPECT_THROW(sampler.sample(with_nan.data(), 3, greedy_params(), {}, {}), Error);
  EXPECT_THROW(sampler.sample(all_masked.data(), 2, p, {}, {}), Error);
  EXPECT_THROW(sampler.sample(all_masked.data(), 2, greedy_params(), {}, {}), Error);
  EXPECT_THROW(sampler.sample(kLogits.data(), 0, p, {}, {}), Error);
  SamplingParams bad;
  bad.top_p = 0.0f;
  EXPECT_THROW(sampler.sample(kLogits.data(), 8, bad, {}, {}), Error);
  const std::vector<int32_t> out_of_vocab = {8};
  p.presence_penalty = 1.0f;
  EXPECT_THROW(sampler.sample(kLogits.data(), 8, p, {}, {{}, out_of_vocab}), Error);
  // The sampler is still usable after errors.
  EXPECT_EQ(sampler.sample(kLogits.data(), 8, greedy_params(), {}, {}).token, 1);
}

}  // namespace
}  // namespace db

#include "sample/penalties.h"

#include <gtest/gtest.h>

#include <vector>

#include "sample/sampler.h"
#include "util/error.h"

namespace db {
namespace {

TEST(Penalties, RepetitionDividesPositiveAndMultipliesNegativeOverPromptAndOutput) {
  std::vector<float> logits = {2.0f, -1.0f, 3.0f, -4.0f, 0.5f};
  const std::vector<int32_t> prompt = {0, 1, 1};
  const std::vector<int32_t> output = {3, 0};
  SamplingParams p;
  p.repetition_penalty = 2.0f;
  PenaltyScratch scratch;
  scratch.apply(logits.data(), 5, p, {prompt, output});
  // Tokens 0, 1, 3 were seen (once each, however often); 2 and 4 untouched.
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -2.0f, 3.0f, -8.0f, 0.5f}));
}

TEST(Penalties, RepetitionBelowOneRewards) {
  std::vector<float> logits = {2.0f, -1.0f, 0.0f};
  const std::vector<int32_t> prompt = {0, 1, 2};
  SamplingParams p;
  p.repetition_penalty = 0.5f;
  PenaltyScratch scratch;
  scratch.apply(logits.data(), 3, p, {prompt, {}});
  EXPECT_EQ(logits, (std::vector<float>{4.0f, -0.5f, 0.0f}));
}

TEST(Penalties, FrequencyAndPresenceCountOutputOnly) {
  std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<int32_t> prompt = {0, 0, 0};
  const std::vector<int32_t> output = {1, 2, 2, 2, 1};
  SamplingParams p;
  p.frequency_penalty = 0.25f;
  p.presence_penalty = 0.5f;
  PenaltyScratch scratch;
  scratch.apply(logits.data(), 4, p, {prompt, output});
  // token 0: prompt only, untouched; token 1: 2 times; token 2: 3 times; token 3: absent.
  EXPECT_EQ(logits, (std::vector<float>{1.0f, 1.0f - 0.5f - 0.5f, 1.0f - 0.75f - 0.5f, 1.0f}));
}

TEST(Penalties, AllThreeInVllmOrder) {
  std::vector<float> logits = {3.0f, -2.0f, 1.0f};
  const std::vector<int32_t> prompt = {2};
  const std::vector<int32_t> output = {0, 0, 1};
  SamplingParams p;
  p.repetition_penalty = 1.5f;
  p.frequency_penalty = 1.0f;
  p.presence_penalty = -0.5f;
  PenaltyScratch scratch;
  scratch.apply(logits.data(), 3, p, {prompt, output});
  EXPECT_FLOAT_EQ(logits[0], 3.0f / 1.5f - 2.0f + 0.5f);
  EXPECT_FLOAT_EQ(logits[1], -2.0f * 1.5f - 1.0f + 0.5f);
  EXPECT_FLOAT_EQ(logits[2], 1.0f / 1.5f);
}

TEST(Penalties, ScratchIsCleanBetweenCalls) {
  SamplingParams p;
  p.frequency_penalty = 1.0f;
  p.repetition_penalty = 2.0f;
  PenaltyScratch scratch;
  const std::vector<int32_t> first = {0, 0, 0, 1};
  std::vector<float> logits = {4.0f, 4.0f, 4.0f};
  scratch.apply(logits.data(), 3, p, {{}, first});
  EXPECT_EQ(logits, (std::vector<float>{4.0f / 2 - 3, 4.0f / 2 - 1, 4.0f}));
  const std::vector<int32_t> second = {2};
  logits = {4.0f, 4.0f, 4.0f};
  scratch.apply(logits.data(), 3, p, {{}, second});
  EXPECT_EQ(logits, (std::vector<float>{4.0f, 4.0f, 4.0f / 2 - 1}));
}

TEST(Penalties, OutOfVocabularyHistoryIsAnErrorAndLeavesScratchClean) {
  SamplingParams p;
  p.frequency_penalty = 1.0f;
  PenaltyScratch scratch;
  std::vector<float> logits = {0.0f, 0.0f};
  const std::vector<int32_t> bad = {1, 2};
  EXPECT_THROW(scratch.apply(logits.data(), 2, p, {{}, bad}), Error);
  const std::vector<int32_t> negative = {-1};
  p.repetition_penalty = 2.0f;
  EXPECT_THROW(scratch.apply(logits.data(), 2, p, {negative, {}}), Error);
  logits = {0.0f, 0.0f};
  const std::vector<int32_t> good = {0};
  p.repetition_penalty = 1.0f;
  scratch.apply(logits.data(), 2, p, {{}, good});
  EXPECT_EQ(logits, (std::vector<float>{-1.0f, 0.0f}));
}

TEST(Penalties, GreedyUsesPenalizedLogits) {
  const std::vector<float> logits = {5.0f, 4.0f, 1.0f};
  const std::vector<int32_t> output = {0, 0};
  SamplingParams p;
  p.temperature = 0.0f;
  p.frequency_penalty = 1.0f;
  Sampler sampler;
  EXPECT_EQ(sampler.sample(logits.data(), 3, p, {}, {{}, output}).token, 1);
  p.frequency_penalty = 0.0f;
  EXPECT_EQ(sampler.sample(logits.data(), 3, p, {}, {{}, output}).token, 0);
}

}  // namespace
}  // namespace db

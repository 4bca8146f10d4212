#include "sample/sampling_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "util/error.h"

namespace db {
namespace {

// Expects validate() to throw a db::Error whose message names `name`.
void expect_rejected(const std::function<void(SamplingParams&)>& edit, const std::string& name) {
  SamplingParams p;
  edit(p);
  try {
    p.validate();
    FAIL() << "validate() accepted a bad " << name;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'" + name + "'"), std::string::npos) << e.what();
  }
}

TEST(SamplingParams, DefaultsAreValidAndNeutral) {
  SamplingParams p;
  EXPECT_NO_THROW(p.validate());
  EXPECT_FLOAT_EQ(p.temperature, 1.0f);
  EXPECT_EQ(p.top_k, 0);
  EXPECT_FLOAT_EQ(p.top_p, 1.0f);
  EXPECT_FLOAT_EQ(p.min_p, 0.0f);
  EXPECT_FALSE(p.has_penalties());
  EXPECT_FALSE(p.is_greedy());
  EXPECT_FALSE(p.seed.has_value());
  EXPECT_FALSE(p.logprobs.has_value());
  EXPECT_EQ(p.effective_top_k(100), 100);
}

TEST(SamplingParams, AcceptsBoundaryValues) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.top_k = -1;
  p.top_p = 1e-6f;
  p.min_p = 1.0f;
  p.repetition_penalty = 1e-3f;
  p.presence_penalty = -2.0f;
  p.frequency_penalty = 2.0f;
  p.logprobs = 20;
  EXPECT_NO_THROW(p.validate());
  EXPECT_TRUE(p.is_greedy());
  EXPECT_TRUE(p.has_penalties());
  p.temperature = 50.0f;
  p.logprobs = 0;
  EXPECT_NO_THROW(p.validate());
}

TEST(SamplingParams, EffectiveTopK) {
  SamplingParams p;
  p.top_k = -1;
  EXPECT_EQ(p.effective_top_k(10), 10);
  p.top_k = 3;
  EXPECT_EQ(p.effective_top_k(10), 3);
  p.top_k = 30;
  EXPECT_EQ(p.effective_top_k(10), 10);
}

TEST(SamplingParams, RejectsOutOfRangeNamingTheParameter) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  expect_rejected([](SamplingParams& p) { p.temperature = -0.1f; }, "temperature");
  expect_rejected([&](SamplingParams& p) { p.temperature = nan; }, "temperature");
  expect_rejected([&](SamplingParams& p) { p.temperature = inf; }, "temperature");
  expect_rejected([](SamplingParams& p) { p.top_k = -2; }, "top_k");
  expect_rejected([](SamplingParams& p) { p.top_p = 0.0f; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.top_p = 1.01f; }, "top_p");
  expect_rejected([&](SamplingParams& p) { p.top_p = nan; }, "top_p");
  expect_rejected([](SamplingParams& p) { p.min_p = -0.01f; }, "min_p");
  expect_rejected([](SamplingParams& p) { p.min_p = 1.5f; }, "min_p");
  expect_rejected([](SamplingParams& p) { p.repetition_penalty = 0.0f; }, "repetition_penalty");
  expect_rejected([](SamplingParams& p) { p.repetition_penalty = -1.0f; }, "repetition_penalty");
  expect_rejected([](SamplingParams& p) { p.presence_penalty = 2.5f; }, "presence_penalty");
  expect_rejected([](SamplingParams& p) { p.presence_penalty = -2.01f; }, "presence_penalty");
  expect_rejected([&](SamplingParams& p) { p.frequency_penalty = nan; }, "frequency_penalty");
  expect_rejected([](SamplingParams& p) { p.frequency_penalty = -3.0f; }, "frequency_penalty");
  expect_rejected([](SamplingParams& p) { p.logprobs = -1; }, "logprobs");
  expect_rejected([](SamplingParams& p) { p.logprobs = 21; }, "logprobs");
}

TEST(SamplingParams, MessageShowsRangeAndValue) {
  SamplingParams p;
  p.top_p = 1.5f;
  try {
    p.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(0, 1]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1.5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace db

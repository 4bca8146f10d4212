// /v1/completions bodies: every accepted shape, every field of the wrong type
// rejected with an error naming it, unknown fields ignored.
#include <gtest/gtest.h>

#include <string>

#include "api/api_error.h"
#include "api/completion_request.h"
#include "api/openai_request.h"

namespace db::api {
namespace {

Json body(const std::string& text) { return Json::parse(text); }

// The param an ApiError names for `b`, or "<no error>".
std::string error_param(const Json& b) {
  try {
    parse_completion_request(b);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.type(), "invalid_request_error");
    return e.param();
  }
  return "<no error>";
}

TEST(CompletionRequest, FullBody) {
  const auto r = parse_completion_request(body(R"({
    "model": "m", "prompt": "Hello", "max_tokens": 32, "temperature": 0.5, "top_p": 0.9, "top_k": 40,
    "min_p": 0.05, "n": 3, "stop": ["\n\n", "END"], "seed": 1234, "presence_penalty": 0.5,
    "frequency_penalty": -0.5, "repetition_penalty": 1.1, "logprobs": 2, "echo": false, "ignore_eos": true,
    "user": "u1", "priority": 0})"));
  EXPECT_EQ(r.common.model, "m");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_FALSE(r.prompts[0].is_tokens);
  EXPECT_EQ(r.prompts[0].text, "Hello");
  EXPECT_EQ(r.max_tokens, 32);
  EXPECT_FLOAT_EQ(r.common.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.common.sampling.top_p, 0.9f);
  EXPECT_EQ(r.common.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.common.sampling.min_p, 0.05f);
  EXPECT_EQ(r.common.n, 3);
  EXPECT_EQ(r.common.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_EQ(r.common.sampling.seed, 1234u);
  EXPECT_FLOAT_EQ(r.common.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.common.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.common.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(r.logprobs, 2);
  EXPECT_EQ(r.common.sampling.logprobs, 2);
  EXPECT_TRUE(r.common.ignore_eos);
  EXPECT_EQ(r.common.user, "u1");
  EXPECT_EQ(r.common.priority, 0);
  EXPECT_NO_THROW(r.common.sampling.validate());
}

TEST(CompletionRequest, Defaults) {
  const auto r = parse_completion_request(body(R"({"prompt": "x"})"));
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FLOAT_EQ(r.common.sampling.temperature, 1.0f);
  EXPECT_EQ(r.common.n, 1);
  EXPECT_TRUE(r.common.stop.empty());
  EXPECT_FALSE(r.common.sampling.seed.has_value());
  EXPECT_FALSE(r.common.sampling.logprobs.has_value());
  EXPECT_EQ(r.common.priority, 1);
  EXPECT_FALSE(r.echo);
  EXPECT_TRUE(r.common.skip_special_tokens);
}

TEST(CompletionRequest, PromptShapes) {
  auto r = parse_completion_request(body(R"({"prompt": ["a", "b"]})"));
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[1].text, "b");

  r = parse_completion_request(body(R"({"prompt": [1, 2, 3]})"));
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_TRUE(r.prompts[0].is_tokens);
  EXPECT_EQ(r.prompts[0].tokens, (std::vector<int32_t>{1, 2, 3}));

  r = parse_completion_request(body(R"({"prompt": [[1, 2], [3]]})"));
  ASSERT_EQ(r.prompts.size(), 2u);
  EXPECT_EQ(r.prompts[1].tokens, (std::vector<int32_t>{3}));

  r = parse_completion_request(body(R"({"prompt": "x", "stop": "###"})"));
  EXPECT_EQ(r.common.stop, (std::vector<std::string>{"###"}));
}

TEST(CompletionRequest, NullMeansAbsent) {
  const auto r = parse_completion_request(body(R"({"prompt": "x", "temperature": null, "stop": null, "seed": null})"));
  EXPECT_FLOAT_EQ(r.common.sampling.temperature, 1.0f);
  EXPECT_TRUE(r.common.stop.empty());
  EXPECT_FALSE(r.common.sampling.seed.has_value());
}

TEST(CompletionRequest, UnknownAndUnsupportedFieldsAreRefused) {
  EXPECT_EQ(error_param(body(R"({"prompt": "x", "best_of": "whatever"})")), "best_of");
  EXPECT_EQ(error_param(body(R"({"prompt": "x", "suffix": 3})")), "suffix");
  EXPECT_EQ(error_param(body(R"({"prompt": "x", "tools": [{"type": "function"}]})")), "tools")
      << "tools are a chat field";
  EXPECT_EQ(error_param(body(R"({"prompt": "x", "logit_bias": {"one": 2}})")), "logit_bias");
  EXPECT_EQ(error_param(body(R"({"prompt": "x", "logit_bias": {"1": 200}})")), "logit_bias.1");
  EXPECT_EQ(error_param(body(R"({"prompt": "x", "logit_bias": [1]})")), "logit_bias");
  const auto biased = parse_completion_request(body(R"({"prompt": "x", "logit_bias": {"17": -100, "3": 2.5}})"));
  EXPECT_EQ(biased.common.sampling.logit_bias, (std::vector<std::pair<int32_t, float>>{{17, -100.0f}, {3, 2.5f}}));
  EXPECT_EQ(error_param(body(R"({"prompt": "x", "nonsense": [1, {}]})")), "nonsense");
  const auto r = parse_completion_request(body(R"({"prompt": "x", "best_of": null, "metadata": {"a": "b"}})"));
  EXPECT_EQ(r.prompts.size(), 1u);
}

TEST(CompletionRequest, WrongTypesNameTheParam) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"prompt": "x", "model": 5})", "model"},
      {R"({"prompt": 5})", "prompt"},
      {R"({"prompt": {"a": 1}})", "prompt"},
      {R"({"prompt": ["a", 1]})", "prompt[1]"},
      {R"({"prompt": [1, "a"]})", "prompt[1]"},
      {R"({"prompt": [1, 2.5]})", "prompt[1]"},
      {R"({"prompt": [[1], "a"]})", "prompt[1]"},
      {R"({"prompt": [[1], [2, "x"]]})", "prompt[1][1]"},
      {R"({"prompt": "x", "max_tokens": "16"})", "max_tokens"},
      {R"({"prompt": "x", "max_tokens": 1.5})", "max_tokens"},
      {R"({"prompt": "x", "temperature": "hot"})", "temperature"},
      {R"({"prompt": "x", "top_p": true})", "top_p"},
      {R"({"prompt": "x", "top_k": 1.5})", "top_k"},
      {R"({"prompt": "x", "min_p": [0.1]})", "min_p"},
      {R"({"prompt": "x", "n": "2"})", "n"},
      {R"({"prompt": "x", "stop": 3})", "stop"},
      {R"({"prompt": "x", "stop": ["a", 3]})", "stop[1]"},
      {R"({"prompt": "x", "seed": "42"})", "seed"},
      {R"({"prompt": "x", "seed": 4.5})", "seed"},
      {R"({"prompt": "x", "presence_penalty": "1"})", "presence_penalty"},
      {R"({"prompt": "x", "frequency_penalty": {}})", "frequency_penalty"},
      {R"({"prompt": "x", "repetition_penalty": "1"})", "repetition_penalty"},
      {R"({"prompt": "x", "logprobs": true})", "logprobs"},
      {R"({"prompt": "x", "echo": "yes"})", "echo"},
      {R"({"prompt": "x", "ignore_eos": 1})", "ignore_eos"},
      {R"({"prompt": "x", "user": 7})", "user"},
      {R"({"prompt": "x", "priority": "high"})", "priority"},
      {R"({"prompt": "x", "stream": "no"})", "stream"},
      {R"({"prompt": "x", "stream_options": {"include_usage": 1}})", "stream_options.include_usage"},
      {R"({"prompt": "x", "stop_token_ids": [1, "2"]})", "stop_token_ids[1]"},
      {R"({"prompt": "x", "skip_special_tokens": "false"})", "skip_special_tokens"},
  };
  for (const auto& [text, param] : cases) EXPECT_EQ(error_param(body(text)), param) << text;
}

TEST(CompletionRequest, OutOfRangeValuesNameTheParam) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "prompt"},
      {R"({"prompt": []})", "prompt"},
      {R"({"prompt": [[1], []]})", "prompt[1]"},
      {R"({"prompt": [-1]})", "prompt[0]"},
      {R"({"prompt": "x", "max_tokens": 0})", "max_tokens"},
      {R"({"prompt": "x", "temperature": -0.1})", "temperature"},
      {R"({"prompt": "x", "temperature": 2.5})", "temperature"},
      {R"({"prompt": "x", "top_p": 0})", "top_p"},
      {R"({"prompt": "x", "top_p": 1.5})", "top_p"},
      {R"({"prompt": "x", "top_p": 1e-300})", "top_p"},  // positive, but 0 as a float
      {R"({"prompt": "x", "top_k": -2})", "top_k"},
      {R"({"prompt": "x", "min_p": 1.5})", "min_p"},
      {R"({"prompt": "x", "n": 0})", "n"},
      {R"({"prompt": "x", "n": 100000})", "n"},
      {R"({"prompt": "x", "presence_penalty": 3})", "presence_penalty"},
      {R"({"prompt": "x", "frequency_penalty": -3})", "frequency_penalty"},
      {R"({"prompt": "x", "repetition_penalty": 0})", "repetition_penalty"},
      {R"({"prompt": "x", "repetition_penalty": 1e300})", "repetition_penalty"},   // inf as a float
      {R"({"prompt": "x", "repetition_penalty": 1e-300})", "repetition_penalty"},  // 0 as a float
      {R"({"prompt": "x", "stop_token_ids": [null]})", "stop_token_ids[0]"},
      {R"({"prompt": "x", "stop_token_ids": [1, null]})", "stop_token_ids[1]"},
      {R"({"prompt": "x", "logprobs": 21})", "logprobs"},
      {R"({"prompt": "x", "priority": 3})", "priority"},
      {R"({"prompt": "x", "stop": [""]})", "stop"},
  };
  for (const auto& [text, param] : cases) EXPECT_EQ(error_param(body(text)), param) << text;
}

TEST(CompletionRequest, EchoWithLogprobsScoresThePrompt) {
  EXPECT_EQ(parse_completion_request(body(R"({"prompt": "x", "echo": true, "logprobs": 3})")).common.sampling.prompt_logprobs,
            3);
  EXPECT_FALSE(parse_completion_request(body(R"({"prompt": "x", "logprobs": 3})")).common.sampling.prompt_logprobs);
  EXPECT_FALSE(parse_completion_request(body(R"({"prompt": "x", "echo": true})")).common.sampling.prompt_logprobs);
}

TEST(CompletionRequest, BodyMustBeAnObject) {
  EXPECT_THROW(parse_completion_request(body(R"([1, 2])")), ApiError);
  EXPECT_THROW(parse_completion_request(body(R"("prompt")")), ApiError);
}

TEST(CompletionRequest, IntegralFloatsAreIntegers) {
  const auto r = parse_completion_request(body(R"({"prompt": "x", "max_tokens": 16.0, "n": 2.0})"));
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_EQ(r.common.n, 2);
}

TEST(ApiErrorJson, OpenAIShape) {
  try {
    parse_completion_request(body(R"({"prompt": "x", "temperature": "hot"})"));
    FAIL() << "no error";
  } catch (const ApiError& e) {
    const auto j = error_body(e);
    ASSERT_TRUE(j.contains("error"));
    const auto& err = j["error"];
    EXPECT_EQ(err["type"], "invalid_request_error");
    EXPECT_EQ(err["param"], "temperature");
    EXPECT_EQ(err["code"], "invalid_type");
    EXPECT_NE(err["message"].get<std::string>().find("temperature"), std::string::npos);
    EXPECT_NE(err["message"].get<std::string>().find("a string"), std::string::npos);
  }
  const auto j = error_body("boom");
  EXPECT_EQ(j["error"]["message"], "boom");
  EXPECT_EQ(j["error"]["type"], "server_error");
  EXPECT_TRUE(j["error"]["param"].is_null());
  EXPECT_TRUE(j["error"]["code"].is_null());
}

TEST(Endpoints, Urls) {
  EXPECT_EQ(endpoint_from_url("/v1/completions"), Endpoint::Completions);
  EXPECT_EQ(endpoint_from_url("/v1/chat/completions"), Endpoint::ChatCompletions);
  EXPECT_FALSE(endpoint_from_url("/v1/embeddings").has_value());
  EXPECT_FALSE(endpoint_from_url("/v1/completions/").has_value());
  EXPECT_STREQ(endpoint_url(Endpoint::ChatCompletions), "/v1/chat/completions");
}

}  // namespace
}  // namespace db::api

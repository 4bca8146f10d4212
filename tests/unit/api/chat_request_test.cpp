// /v1/chat/completions bodies: messages, content parts, token limits, logprobs.
#include <gtest/gtest.h>

#include <string>

#include "api/api_error.h"
#include "api/chat_request.h"

namespace db::api {
namespace {

Json chat_body(const std::string& text) { return Json::parse(text); }

std::string chat_error_param(const std::string& text) {
  try {
    parse_chat_request(chat_body(text));
  } catch (const ApiError& e) {
    return e.param();
  }
  return "<no error>";
}

TEST(ChatRequest, MessagesAndFields) {
  const auto r = parse_chat_request(chat_body(R"({
    "model": "m",
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": "Hi"},
                 {"role": "assistant", "content": "Hello!"},
                 {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]}],
    "max_tokens": 50, "temperature": 0, "seed": 7, "stop": "\n", "logprobs": true, "top_logprobs": 3,
    "n": 2, "tools": null, "response_format": null})"));
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "Be brief.");
  EXPECT_EQ(r.messages[2].role, "assistant");
  EXPECT_EQ(r.messages[3].content, "part one\npart two");
  EXPECT_EQ(r.max_tokens, 50);
  EXPECT_FLOAT_EQ(r.common.sampling.temperature, 0.0f);
  EXPECT_TRUE(r.common.sampling.is_greedy());
  EXPECT_EQ(r.common.sampling.seed, 7u);
  EXPECT_EQ(r.common.stop, (std::vector<std::string>{"\n"}));
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 3);
  EXPECT_EQ(r.common.sampling.logprobs, 3);
  EXPECT_EQ(r.common.n, 2);
}

TEST(ChatRequest, MaxCompletionTokensWins) {
  auto r = parse_chat_request(chat_body(R"({"messages": [{"role": "user", "content": "x"}],
                                       "max_tokens": 10, "max_completion_tokens": 20})"));
  EXPECT_EQ(r.max_tokens, 20);
  r = parse_chat_request(chat_body(R"({"messages": [{"role": "user", "content": "x"}]})"));
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FALSE(r.logprobs);
  EXPECT_FALSE(r.common.sampling.logprobs.has_value());
}

TEST(ChatRequest, LogprobsWithoutTop) {
  const auto r = parse_chat_request(chat_body(R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true})"));
  EXPECT_EQ(r.common.sampling.logprobs, 0);
}

TEST(ChatRequest, DeveloperRoleIsSystem) {
  const auto r = parse_chat_request(chat_body(R"({"messages": [{"role": "developer", "content": "rules"}, {"role": "user", "content": "x"}]})"));
  EXPECT_EQ(r.messages[0].role, "system");
}

TEST(ChatRequest, EmptyStringContentIsAllowed) {
  const auto r = parse_chat_request(chat_body(R"({"messages": [{"role": "user", "content": ""}]})"));
  EXPECT_EQ(r.messages[0].content, "");
}

TEST(ChatRequest, ErrorsNameTheParam) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({})", "messages"},
      {R"({"messages": "hi"})", "messages"},
      {R"({"messages": []})", "messages"},
      {R"({"messages": ["hi"]})", "messages[0]"},
      {R"({"messages": [{"content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": 1, "content": "x"}]})", "messages[0].role"},
      {R"({"messages": [{"role": "user", "content": "a"}, {"role": "robot", "content": "x"}]})", "messages[1].role"},
      {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
      {R"({"messages": [{"role": "user", "content": [5]}]})", "messages[0].content[0]"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})",
       "messages[0].content[0].type"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})", "messages[0].content[0].text"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]})",
       "messages[0].content[0].text"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": "5"})", "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 0})", "max_completion_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": 5, "max_tokens": "a"})",
       "max_tokens"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": 1})", "logprobs"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": "2"})", "top_logprobs"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 21})", "top_logprobs"},
      {R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})", "top_logprobs"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": "0"})", "temperature"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": [null]})", "stop[0]"},
  };
  for (const auto& [text, param] : cases) EXPECT_EQ(chat_error_param(text), param) << text;
}

}  // namespace
}  // namespace db::api

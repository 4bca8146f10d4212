// Turning requests into engine requests with the default model's tokenizer and
// chat template: token budgets against the context, errors naming the param.
#include <gtest/gtest.h>

#include "api/api_error.h"
#include "api/openai_request.h"
#include "bundle/model_bundle.h"
#include "default_model.h"
#include "tokenizer/tokenizer.h"

namespace db::api {
namespace {

class PrepareTest : public test::DefaultModelSuite<ModelBundle> {
 protected:
  static PreparedRequest prep(Endpoint e, const std::string& body, int64_t ctx = 2048) {
    return prepare_request(parse_request(e, Json::parse(body)), *model_, ctx);
  }
  static std::string error_code(Endpoint e, const std::string& body, int64_t ctx, std::string* param = nullptr) {
    try {
      prep(e, body, ctx);
    } catch (const ApiError& err) {
      if (param) *param = err.param();
      return err.code();
    }
    return "<no error>";
  }
};

TEST_F(PrepareTest, CompletionDefaultsAndSampling) {
  const auto p = prep(Endpoint::Completions,
                      R"({"prompt": "The capital of France is", "temperature": 0, "stop": ["."], "n": 2,
                          "priority": 2, "ignore_eos": true, "stop_token_ids": [2], "timeout": 1.5})");
  ASSERT_EQ(p.parts.size(), 1u);
  const EngineRequest& e = p.parts[0];
  EXPECT_EQ(e.prompt, model_->encode_prompt("The capital of France is"));
  EXPECT_EQ(e.max_tokens, 16);
  EXPECT_TRUE(e.sampling.is_greedy());
  EXPECT_EQ(e.stop, (std::vector<std::string>{"."}));
  EXPECT_EQ(e.n, 2);
  EXPECT_EQ(e.priority, 2);
  EXPECT_TRUE(e.ignore_eos);
  EXPECT_EQ(e.stop_token_ids, (std::vector<int32_t>{2}));
  EXPECT_DOUBLE_EQ(e.timeout_seconds, 1.5);
  EXPECT_EQ(p.echo_texts[0], "");
}

TEST_F(PrepareTest, SeveralPromptsBecomeSeveralParts) {
  const auto p = prep(Endpoint::Completions, R"({"prompt": ["a b c", "d e"], "max_tokens": 5, "echo": true})");
  ASSERT_EQ(p.parts.size(), 2u);
  EXPECT_EQ(p.parts[0].prompt, model_->encode_prompt("a b c"));
  EXPECT_EQ(p.parts[1].prompt, model_->encode_prompt("d e"));
  EXPECT_EQ(p.parts[1].max_tokens, 5);
  EXPECT_EQ(p.echo_texts[0], "a b c");
  EXPECT_EQ(p.echo_texts[1], "d e");
  const auto ids = prep(Endpoint::Completions, R"({"prompt": [[1, 2, 3], [4]], "echo": true})");
  ASSERT_EQ(ids.parts.size(), 2u);
  EXPECT_EQ(ids.parts[0].prompt, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(ids.parts[1].prompt, (std::vector<int32_t>{4}));
  EXPECT_EQ(ids.echo_texts[0], model_->tokenizer().decode({1, 2, 3}, true));
}

TEST_F(PrepareTest, ChatUsesTheTemplateAndTheRestOfTheContext) {
  const auto p = prep(Endpoint::ChatCompletions,
                      R"({"messages": [{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": [{"type": "text", "text": "Hi"}]}]})",
                      1000);
  ASSERT_EQ(p.parts.size(), 1u);
  const auto expected = model_->encode_chat({{"system", "Be brief."}, {"user", "Hi"}});
  EXPECT_EQ(p.parts[0].prompt, expected);
  EXPECT_EQ(p.parts[0].max_tokens, 1000 - static_cast<int32_t>(expected.size()));
  const auto capped = prep(Endpoint::ChatCompletions,
                           R"({"messages": [{"role": "user", "content": "Hi"}], "max_completion_tokens": 7})");
  EXPECT_EQ(capped.parts[0].max_tokens, 7);
}

TEST_F(PrepareTest, ContextLimits) {
  std::string param;
  // A prompt of ~ 60 tokens in a 16-token context.
  std::string words;
  for (int i = 0; i < 20; ++i) words += "the cat sat ";
  const std::string long_prompt = R"({"prompt": ")" + words + R"("})";
  EXPECT_EQ(error_code(Endpoint::Completions, long_prompt, 16, &param), "context_length_exceeded");
  EXPECT_EQ(param, "prompt");
  EXPECT_EQ(error_code(Endpoint::Completions, R"({"prompt": "Hello there", "max_tokens": 100})", 50, &param),
            "context_length_exceeded");
  EXPECT_EQ(param, "max_tokens");
  EXPECT_EQ(error_code(Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "Hello"}]})", 10, &param),
            "context_length_exceeded");
  EXPECT_EQ(param, "messages");
  // The default budget (16) shrinks to fit instead of failing.
  const auto p = prep(Endpoint::Completions, R"({"prompt": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]})", 20);
  EXPECT_EQ(p.parts[0].max_tokens, 10);
}

TEST_F(PrepareTest, BadTokenIds) {
  std::string param;
  EXPECT_EQ(error_code(Endpoint::Completions, R"({"prompt": [1, 99999999]})", 2048, &param), "invalid_value");
  EXPECT_EQ(param, "prompt");
  EXPECT_EQ(error_code(Endpoint::Completions, R"({"prompt": [[1], [99999999]]})", 2048, &param), "invalid_value");
  EXPECT_EQ(param, "prompt[1]");
  EXPECT_EQ(error_code(Endpoint::Completions, R"({"prompt": "x", "stop_token_ids": [99999999]})", 2048, &param),
            "invalid_value");
  EXPECT_EQ(param, "stop_token_ids");
}

TEST_F(PrepareTest, SuffixNeedsFillInTheMiddleTokens) {
  std::string param;
  ASSERT_FALSE(model_->fim_tokens()) << "SmolLM2 has none";
  EXPECT_EQ(error_code(Endpoint::Completions, R"({"prompt": "def f(", "suffix": "):"})", 2048, &param), "invalid_value");
  EXPECT_EQ(param, "suffix");
}

TEST_F(PrepareTest, ToolChoices) {
  const std::string head = R"({"messages": [{"role": "user", "content": "Weather?"}],
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
                 "properties": {"city": {"type": "string"}}}}}])";
  std::string param;
  ASSERT_EQ(model_->tool_call_format(), chat::ToolCallFormat::None) << "the default template shows no tool calls";
  EXPECT_EQ(error_code(Endpoint::ChatCompletions, head + "}", 2048, &param), "invalid_value");
  EXPECT_EQ(param, "tool_choice") << "auto needs a format";
  const auto required = prep(Endpoint::ChatCompletions, head + R"(, "tool_choice": "required"})");
  EXPECT_TRUE(required.parts[0].sampling.constraint) << "required is constrained by the grammar";
  const auto none = prep(Endpoint::ChatCompletions, head + R"(, "tool_choice": "none"})");
  EXPECT_FALSE(none.parts[0].sampling.constraint);
  model_->set_tool_call_format(chat::ToolCallFormat::Hermes);
  const auto aut = prep(Endpoint::ChatCompletions, head + "}");
  model_->set_tool_call_format(chat::ToolCallFormat::None);
  EXPECT_FALSE(aut.parts[0].sampling.constraint) << "auto constrains nothing";
  EXPECT_EQ(aut.parts[0].prompt, none.parts[0].prompt) << "this template does not render tools";
}

TEST(ResolveMaxTokens, Rules) {
  EXPECT_EQ(resolve_max_tokens(10, std::nullopt, 16, 100, "prompt"), 16);
  EXPECT_EQ(resolve_max_tokens(90, std::nullopt, 16, 100, "prompt"), 10);
  EXPECT_EQ(resolve_max_tokens(90, 10, 16, 100, "prompt"), 10);
  EXPECT_THROW(resolve_max_tokens(90, 11, 16, 100, "prompt"), ApiError);
  EXPECT_THROW(resolve_max_tokens(100, std::nullopt, 16, 100, "prompt"), ApiError);
}

}  // namespace
}  // namespace db::api

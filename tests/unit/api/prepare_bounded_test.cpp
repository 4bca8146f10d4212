// Prompts longer than the context, with the default model: text and chat prompts are
// refused (context_length_exceeded) when tokenizing passes the context, and a server's
// body limits follow from its context and tokenizer.
#include <gtest/gtest.h>

#include <string>

#include "api/api_error.h"
#include "api/request_body.h"
#include "bundle/model_bundle.h"
#include "default_model.h"
#include "tokenizer/tokenizer.h"

namespace db::api {
namespace {

class PrepareBoundedTest : public test::DefaultModelSuite<ModelBundle> {
 protected:
  // The error preparing `body` under context `ctx` gets: {param, message}.
  static std::pair<std::string, std::string> refusal(Endpoint e, const std::string& body, int64_t ctx) {
    try {
      prepare_request(parse_request_body(e, body, body_limits(ctx, model_->tokenizer())), *model_, ctx);
    } catch (const ApiError& err) {
      EXPECT_EQ(err.code(), "context_length_exceeded") << err.what();
      return {err.param(), err.what()};
    }
    return {"<no error>", ""};
  }
  static std::string words(int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "hello ";
    return s;
  }
};

TEST_F(PrepareBoundedTest, TextPromptPastTheContextIsRefused) {
  const std::string fits = R"({"prompt": ")" + words(100) + R"(", "max_tokens": 1})";
  EXPECT_EQ(refusal(Endpoint::Completions, fits, 256).first, "<no error>");
  const auto [param, message] =
      refusal(Endpoint::Completions, R"({"prompt": ")" + words(1000) + R"(", "max_tokens": 1})", 256);
  EXPECT_EQ(param, "prompt");
  EXPECT_NE(message.find("maximum context length is 256 tokens, but the prompt has more than 255"), std::string::npos)
      << message;
  EXPECT_EQ(refusal(Endpoint::Completions, R"({"prompt": ["x", ")" + words(1000) + R"("]})", 256).first,
            "prompt[1]");
}

TEST_F(PrepareBoundedTest, ChatPastTheContextIsRefused) {
  std::string messages;
  for (int i = 0; i < 8; ++i) messages += R"({"role": "user", "content": ")" + words(40) + R"("},)";
  messages.pop_back();
  const std::string body = R"({"messages": [)" + messages + "]}";
  EXPECT_EQ(refusal(Endpoint::ChatCompletions, body, 1024).first, "<no error>");
  EXPECT_EQ(refusal(Endpoint::ChatCompletions, body, 256).first, "messages");
}

TEST_F(PrepareBoundedTest, BodyLimitsFollowTheContext) {
  const Tokenizer& tok = model_->tokenizer();
  const BodyLimits l = body_limits(256, tok);
  EXPECT_EQ(l.max_prompt_tokens, 255u);
  EXPECT_EQ(l.max_string_bytes, 256 * tok.max_token_bytes());
  // A string longer than the text of a whole context is refused before it is parsed.
  const std::string huge(l.max_string_bytes + 1, 'a');
  const auto [param, message] = refusal(Endpoint::Completions, R"({"prompt": ")" + huge + R"("})", 256);
  EXPECT_EQ(param, "prompt");
  EXPECT_NE(message.find("256 tokens"), std::string::npos) << message;
}

}  // namespace
}  // namespace db::api

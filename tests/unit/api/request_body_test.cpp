// Request bodies from their bytes: the limits that bound a parse's memory (nesting,
// string length, value count, token-id prompt length, each refused while parsing) and
// the field rules (unknown and unsupported fields, message content, user turns,
// stream_options, n), each failure an ApiError naming the param.
#include <gtest/gtest.h>

#include <string>

#include "api/api_error.h"
#include "api/request_body.h"

namespace db::api {
namespace {

constexpr Endpoint kCompletions = Endpoint::Completions;
constexpr Endpoint kChat = Endpoint::ChatCompletions;

// The error a body gets: {param, code}; {"<no error>", ""} when it is accepted.
std::pair<std::string, std::string> error_of(Endpoint e, const std::string& body, const BodyLimits& limits = {}) {
  try {
    parse_request_body(e, body, limits);
  } catch (const ApiError& err) {
    EXPECT_EQ(err.status(), 400) << err.what();
    EXPECT_FALSE(std::string(err.what()).empty());
    return {err.param(), err.code()};
  }
  return {"<no error>", ""};
}

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string chat(const std::string& messages, const std::string& extra = "") {
  return R"({"messages": )" + messages + extra + "}";
}

TEST(RequestBody, AcceptsTheFieldsItReads) {
  const ApiRequest r = parse_request_body(
      kCompletions, R"({"model": "m", "prompt": "x", "max_tokens": 3, "n": 2, "stream": true,
                        "stream_options": {"include_usage": true}, "metadata": {"k": "v"}, "logit_bias": null})");
  const auto& c = std::get<CompletionRequest>(r);
  EXPECT_EQ(c.common.n, 2);
  EXPECT_TRUE(c.common.stream_include_usage);
  EXPECT_EQ(c.prompts[0].text, "x");
}

TEST(RequestBody, NestingDeeperThanTheLimitIsRefused) {
  BodyLimits limits;
  limits.max_depth = 8;
  // The body object is level 1: seven more levels fit, eight do not.
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": )" + nested(7) + "}", limits).second, "invalid_type");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": )" + nested(8) + "}", limits),
            std::make_pair(std::string("prompt"), std::string("nesting_too_deep")));
  // Refused before the text is parsed: malformed text after the deep part changes nothing.
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": )" + std::string(100, '[') + "}}}", limits).second,
            "nesting_too_deep");
  // Brackets inside strings do not count.
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ")" + std::string(100, '[') + R"("})", limits).first, "<no error>");
}

TEST(RequestBody, DefaultDepthLimitHoldsAgainstMillionsOfLevels) {
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": )" + nested(1000000) + "}").second, "nesting_too_deep");
}

TEST(RequestBody, TokenPromptLongerThanTheLimitIsRefusedWhileRead) {
  BodyLimits limits;
  limits.max_prompt_tokens = 4;
  limits.context_tokens = 5;
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": [1, 2, 3, 4]})", limits).first, "<no error>");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": [1, 2, 3, 4, 5]})", limits),
            std::make_pair(std::string("prompt"), std::string("context_length_exceeded")));
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": [[1], [1, 2, 3, 4, 5]]})", limits).first, "prompt[1]");
  // Refused when the count passes the limit: what follows (here, broken JSON) is never read.
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": [1, 2, 3, 4, 5, 6 garbage)", limits).second,
            "context_length_exceeded");
}

TEST(RequestBody, TooManyValuesAreRefusedWhileRead) {
  BodyLimits limits;
  limits.max_values = 10;
  // Object + key values: {"prompt": [7 strings]} is 1 + 1 + 7 = 9 values.
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ["a", "b", "c", "d", "e", "f", "g"]})", limits).first,
            "<no error>");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ["a", "b", "c", "d", "e", "f", "g", "h", "i", broken)", limits),
            std::make_pair(std::string("prompt"), std::string("too_many_values")));
}

TEST(RequestBody, LongStringsAreRefusedBeforeTheParserBuffersThem) {
  BodyLimits limits;
  limits.max_string_bytes = 16;
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ")" + std::string(16, 'a') + R"("})", limits).first, "<no error>");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ")" + std::string(17, 'a') + R"("})", limits),
            std::make_pair(std::string("prompt"), std::string("string_too_long")));
  // Escapes count once each: 16 escaped quotes fit.
  std::string escaped;
  for (int i = 0; i < 16; ++i) escaped += R"(\")";
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ")" + escaped + R"("})", limits).first, "<no error>");
  // A \u escape decodes to up to 3 UTF-8 bytes: 5 euro signs (15 bytes) fit, 6 (18 bytes) do not.
  std::string euros;
  for (int i = 0; i < 5; ++i) euros += R"(\u20ac)";
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ")" + euros + R"("})", limits).first, "<no error>");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ")" + euros + R"(\u20ac"})", limits).second, "string_too_long");
  limits.context_tokens = 4;  // limits derived from a context say so
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": ")" + std::string(40, 'a') + R"("})", limits).second,
            "context_length_exceeded");
}

TEST(RequestBody, StringsTogetherAreBounded) {
  BodyLimits limits;
  limits.max_total_string_bytes = 40;
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": [")" + std::string(20, 'a') + R"(", ")" + std::string(20, 'b') +
                                       R"("]})",
                     limits),
            std::make_pair(std::string("prompt"), std::string("string_too_long")));
}

TEST(RequestBody, UnknownFieldIsRefusedBeforeItsValueIsRead) {
  // The value after the unknown key is never parsed: deep or broken, the answer names the key.
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "frobnicate": 1})"),
            std::make_pair(std::string("frobnicate"), std::string("unknown_parameter")));
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "extra": [[[[ not json)").first, "extra");
  // A field of the other endpoint is unknown here.
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "messages": []})").first, "messages");
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"}])", R"(, "echo": true)")).first, "echo");
}

TEST(RequestBody, BestOfIsACompletionsField) {
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"}])", R"(, "best_of": 2)")),
            std::make_pair(std::string("best_of"), std::string("unsupported_parameter")));
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "best_of": 2})").first, "<no error>");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "best_of": 2, "n": 3})").first, "best_of");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "best_of": 2, "stream": true})").first, "best_of");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "best_of": 2, "n": 2, "stream": true})").first, "<no error>");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "best_of": 0})").first, "best_of");
}

TEST(RequestBody, UnsupportedFieldsAreRefusedUnlessNull) {
  for (const char* field : {"functions", "function_call"}) {
    const std::string key = field;
    EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"}])", ", \"" + key + "\": {\"a\": 1}")),
              std::make_pair(key, std::string("unsupported_parameter")));
    EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", ")" + key + R"(": 2})").first, key);
    EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", ")" + key + R"(": null})").first, "<no error>");
  }
}

TEST(RequestBody, SuffixIsACompletionsField) {
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "suffix": "y"})").first, "<no error>");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "suffix": 3})").first, "suffix");
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"}])", R"(, "suffix": "y")")).second,
            "unknown_parameter");
}

TEST(RequestBody, ToolsAreAChatField) {
  for (const char* field : {"tools", "tool_choice", "parallel_tool_calls"})
    EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", ")" + std::string(field) + R"(": null})").second,
              "unknown_parameter");
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"}])", R"(, "tools": {"a": 1})")),
            std::make_pair(std::string("tools"), std::string("invalid_type")));
}

TEST(RequestBody, FieldRulesHoldForAParsedDom) {
  // The batch path parses generically and validates the DOM: the same rules apply.
  EXPECT_THROW(parse_request(kCompletions, Json::parse(R"({"prompt": "x", "functions": "y"})")), ApiError);
  EXPECT_THROW(parse_request(kCompletions, Json::parse(R"({"prompt": "x", "foo": null})")), ApiError);
}

TEST(RequestBody, MessagesNeedContent) {
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user"}])")),
            std::make_pair(std::string("messages[0].content"), std::string("missing_required_parameter")));
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": null}])")),
            std::make_pair(std::string("messages[0].content"), std::string("invalid_type")));
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"}, {"role": "assistant", "content": []}])")),
            std::make_pair(std::string("messages[1].content"), std::string("invalid_value")));
  // An assistant turn with tool calls may leave the content out; each call names its function.
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"},
                                     {"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]}])")),
            std::make_pair(std::string("messages[1].tool_calls[0].function"), std::string("invalid_value")));
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x"},
                                     {"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type":
                                      "function", "function": {"name": "f", "arguments": "{}"}}]},
                                     {"role": "tool", "tool_call_id": "1", "content": "42"}])"))
                .first,
            "<no error>");
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x", "colour": "red"}])")).first,
            "messages[0].colour");
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "user", "content": "x", "name": "ann", "refusal": null}])")).first,
            "<no error>");
}

TEST(RequestBody, ConversationNeedsAUserTurn) {
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "assistant", "content": "Hello"}])")),
            std::make_pair(std::string("messages"), std::string("invalid_value")));
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "system", "content": "Be brief."},
                                     {"role": "assistant", "content": "Hello"}])"))
                .first,
            "messages");
  EXPECT_EQ(error_of(kChat, chat(R"([{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "x"}])"))
                .first,
            "<no error>");
}

TEST(RequestBody, StreamOptionsNeedStream) {
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "stream_options": {"include_usage": true}})"),
            std::make_pair(std::string("stream_options"), std::string("invalid_value")));
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "stream": false, "stream_options": {}})").first,
            "stream_options");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x", "stream_options": null})").first, "<no error>");
}

TEST(RequestBody, NIsLimitedByTheEngineLimit) {
  const std::string at_limit = R"({"prompt": "x", "n": )" + std::to_string(kMaxSamplesPerPrompt) + "}";
  EXPECT_EQ(error_of(kCompletions, at_limit).first, "<no error>");
  const std::string above = R"({"prompt": "x", "n": )" + std::to_string(kMaxSamplesPerPrompt + 1) + "}";
  EXPECT_EQ(error_of(kCompletions, above), std::make_pair(std::string("n"), std::string("invalid_value")));
  EXPECT_EQ(kMaxSamplesPerPrompt, 64);
}

TEST(RequestBody, BrokenJsonIsInvalidJson) {
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x",)").second, "invalid_json");
  EXPECT_EQ(error_of(kCompletions, R"({"prompt": "x"} trailing)").second, "invalid_json");
  EXPECT_EQ(error_of(kCompletions, "").second, "invalid_json");
}

TEST(RequestBody, GenericParseKeepsLimitsButNoFieldRules) {
  EXPECT_NO_THROW(parse_json_bounded(R"({"anything": [1, {"b": null}]})"));
  BodyLimits limits;
  limits.max_depth = 3;
  EXPECT_THROW(parse_json_bounded(R"({"body": {"a": [[1]]}})", limits), ApiError);
  try {
    parse_json_bounded("{");
    ADD_FAILURE() << "accepted broken JSON";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.code(), "invalid_json");
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos);
  }
}

}  // namespace
}  // namespace db::api

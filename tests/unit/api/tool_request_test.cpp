// Tools in chat requests: the fields parse and refuse malformed input naming the
// field; required and named choices become JSON-schema constraints; answers are
// read into tool_calls for each choice, whole and streamed; the chat response
// carries them with finish_reason "tool_calls".
#include <gtest/gtest.h>

#include <string>

#include "api/api_error.h"
#include "api/chat_request.h"
#include "api/generation_result.h"
#include "api/response.h"
#include "api/tool_call_output.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"

namespace db::api {
namespace {

const char* kTools = R"("tools": [
  {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
   "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "now"}}])";

ChatCompletionRequest chat(const std::string& extra) {
  return parse_chat_request(
      Json::parse(R"({"messages": [{"role": "user", "content": "hi"}], )" + std::string(kTools) + extra + "}"));
}

std::string error_param(const std::string& body) {
  try {
    parse_chat_request(Json::parse(body));
  } catch (const ApiError& e) {
    return e.param();
  }
  return "<no error>";
}

TEST(ToolFields, ChoicesAndDefaults) {
  ChatCompletionRequest r = chat("");
  EXPECT_EQ(r.tools.choice, ToolRequest::Choice::Auto) << "auto when tools are given";
  ASSERT_EQ(r.tools.functions.size(), 2u);
  EXPECT_EQ(r.tools.functions[1].parameters, Json::parse(R"({"type": "object", "properties": {}})"));
  EXPECT_FALSE(r.common.guided) << "auto constrains nothing";
  EXPECT_TRUE(r.tools.parallel);
  EXPECT_EQ(chat(R"(, "tool_choice": "none")").tools.choice, ToolRequest::Choice::None);
  r = chat(R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})");
  EXPECT_EQ(r.tools.choice, ToolRequest::Choice::Named);
  ASSERT_TRUE(r.common.guided);
  EXPECT_EQ(r.common.guided->field, "tool_choice");
  EXPECT_EQ(Json::parse(r.common.guided->spec.text), r.tools.functions[0].parameters);
  r = chat(R"(, "tool_choice": "required", "parallel_tool_calls": false)");
  ASSERT_TRUE(r.common.guided);
  const Json schema = Json::parse(r.common.guided->spec.text);
  EXPECT_EQ(schema["type"], "array");
  EXPECT_EQ(schema["minItems"], 1);
  EXPECT_EQ(schema["maxItems"], 1) << "parallel_tool_calls false: one call";
  ASSERT_EQ(schema["items"]["anyOf"].size(), 2u);
  EXPECT_EQ(schema["items"]["anyOf"][0]["properties"]["name"]["const"], "get_weather");
  EXPECT_EQ(chat(R"(, "tool_choice": "required")").common.guided->spec.text.find("maxItems"), std::string::npos);
  const ChatCompletionRequest none = parse_chat_request(
      Json::parse(R"({"messages": [{"role": "user", "content": "hi"}], "tools": [], "tool_choice": "none"})"));
  EXPECT_FALSE(none.tools.active());
}

TEST(ToolFields, ErrorsNameTheField) {
  const std::string m = R"({"messages": [{"role": "user", "content": "x"}], )";
  const std::pair<std::string, const char*> cases[] = {
      {m + R"("tools": {}})", "tools"},
      {m + R"("tools": [1]})", "tools[0]"},
      {m + R"("tools": [{"type": "retrieval"}]})", "tools[0].type"},
      {m + R"("tools": [{"type": "function"}]})", "tools[0].function"},
      {m + R"("tools": [{"type": "function", "function": {"name": "a b"}}]})", "tools[0].function.name"},
      {m + R"("tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]})",
       "tools[0].function.parameters"},
      {m + R"("tools": [{"type": "function", "function": {"name": "f", "colour": 1}}]})", "tools[0].function.colour"},
      {m + R"("tools": [{"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "f"}}]})",
       "tools[1].function.name"},
      {m + R"("tool_choice": "required"})", "tool_choice"},
      {m + R"("tool_choice": "sometimes", "tools": [{"type": "function", "function": {"name": "f"}}]})", "tool_choice"},
      {m + R"("tool_choice": {"type": "function", "function": {"name": "g"}}, "tools": [{"type": "function", "function": {"name": "f"}}]})",
       "tool_choice.function.name"},
      {m + R"("tool_choice": "required", "response_format": {"type": "json_object"}, "tools": [{"type": "function", "function": {"name": "f"}}]})",
       "tool_choice"},
      {m + R"("parallel_tool_calls": "yes"})", "parallel_tool_calls"},
  };
  for (const auto& [body, param] : cases) EXPECT_EQ(error_param(body), param) << body;
  std::string many = m + R"("tools": [)";
  for (size_t i = 0; i <= kMaxTools; ++i)
    many += std::string(i ? "," : "") + R"({"type": "function", "function": {"name": "f)" + std::to_string(i) + "\"}}";
  EXPECT_EQ(error_param(many + "]}"), "tools");
}

TEST(ToolFields, ToolTurnsParse) {
  const ChatCompletionRequest r = parse_chat_request(Json::parse(R"({"messages": [
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                           "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]})"));
  ASSERT_EQ(r.messages.size(), 3u);
  EXPECT_FALSE(r.messages[1].content) << "no content beside the calls";
  ASSERT_EQ(r.messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(r.messages[1].tool_calls[0].arguments, "{\"city\": \"Oslo\"}");
  EXPECT_EQ(r.messages[2].tool_call_id, "call_1");
  EXPECT_EQ(error_param(R"({"messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "y"}]})"),
            "messages[1].tool_call_id");
  EXPECT_EQ(error_param(R"({"messages": [{"role": "user", "content": "x", "tool_call_id": "1"}]})"),
            "messages[0].tool_call_id");
  EXPECT_EQ(error_param(R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant"}]})"),
            "messages[1].content");
}

ToolCallAnswer answer(const std::string& extra, chat::ToolCallFormat f, const std::string& text) {
  return extract_tool_calls(chat(extra).tools, f, text);
}

TEST(ToolCallOutput, EachChoiceIsRead) {
  ToolCallAnswer a = answer(R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})",
                            chat::ToolCallFormat::None, R"({"city": "Oslo"})");
  ASSERT_EQ(a.calls.size(), 1u);
  EXPECT_EQ(a.calls[0].name, "get_weather");
  EXPECT_EQ(a.calls[0].arguments, R"({"city": "Oslo"})") << "a named call's arguments are the output as written";
  EXPECT_EQ(a.calls[0].id.substr(0, 5), "call_");
  EXPECT_EQ(a.content, "");
  a = answer(R"(, "tool_choice": "required")", chat::ToolCallFormat::None,
             R"([{"name": "get_weather", "parameters": {"city": "Oslo"}}, {"name": "now", "parameters": {}}])");
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.calls[1].name, "now");
  EXPECT_EQ(a.calls[0].arguments, R"({"city":"Oslo"})");
  EXPECT_NE(a.calls[0].id, a.calls[1].id);
  a = answer(R"(, "tool_choice": "required")", chat::ToolCallFormat::None, R"([{"name": "get_wea)");
  EXPECT_TRUE(a.calls.empty()) << "cut short: no calls";
  EXPECT_EQ(a.content, R"([{"name": "get_wea)");
  const std::string hermes = "<tool_call>{\"name\": \"now\"}</tool_call><tool_call>{\"name\": \"now\"}</tool_call>";
  a = answer("", chat::ToolCallFormat::Hermes, hermes);
  EXPECT_EQ(a.calls.size(), 2u);
  a = answer(R"(, "parallel_tool_calls": false)", chat::ToolCallFormat::Hermes, hermes);
  EXPECT_EQ(a.calls.size(), 1u) << "parallel_tool_calls false keeps the first call";
  a = answer(R"(, "tool_choice": "none")", chat::ToolCallFormat::Hermes, hermes);
  EXPECT_TRUE(a.calls.empty());
  EXPECT_EQ(a.content, hermes);
}

TEST(ToolCallOutput, NamedArgumentsStreamAsWritten) {
  ToolCallExtractor ex(chat(R"(, "tool_choice": {"type": "function", "function": {"name": "now"}})").tools,
                       chat::ToolCallFormat::None);
  ToolCallOutput first = ex.push("{");
  ASSERT_EQ(first.calls.size(), 1u);
  EXPECT_TRUE(first.calls[0].first);
  EXPECT_EQ(first.calls[0].name, "now");
  EXPECT_EQ(first.calls[0].arguments, "{");
  ToolCallOutput next = ex.push("}");
  ASSERT_EQ(next.calls.size(), 1u);
  EXPECT_FALSE(next.calls[0].first);
  EXPECT_EQ(next.calls[0].arguments, "}");
  EXPECT_TRUE(ex.flush().calls.empty());
  const Json deltas = tool_call_deltas_json(first.calls);
  EXPECT_EQ(deltas[0]["index"], 0);
  EXPECT_EQ(deltas[0]["type"], "function");
  EXPECT_EQ(deltas[0]["function"]["name"], "now");
  EXPECT_FALSE(tool_call_deltas_json(next.calls)[0].contains("id"));
}

std::unique_ptr<Tokenizer> byte_tokenizer() {
  TokenizerParts parts;
  for (int b = 0; b < 256; ++b) parts.tokens.push_back(byte_level::char_of_byte(static_cast<uint8_t>(b)));
  parts.pre_tokenizer.add_byte_level(false, true);
  return Tokenizer::from_parts(parts);
}

TEST(ToolCallOutput, ChatResponseCarriesTheCalls) {
  const auto tok = byte_tokenizer();
  const ChatCompletionRequest req = chat(R"(, "n": 2)");
  PreparedRequest p;
  p.parts.emplace_back();
  p.parts[0].prompt = {65};
  p.parts[0].n = 2;
  p.echo_texts.emplace_back();
  GenerationResult r(p);
  auto out = [](int32_t index, const std::string& text, FinishReason finish) {
    SampleOutput o;
    o.index = index;
    o.new_text = text;
    o.finish = finish;
    return o;
  };
  r.add(0, out(0, "Checking.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>",
               FinishReason::Stop), RequestStats{}, false);
  r.add(0, out(1, "No tool needed.", FinishReason::Stop), RequestStats{}, true);
  ResponseMeta meta{"chatcmpl-1", 5, "tiny"};
  meta.tool_format = chat::ToolCallFormat::Hermes;
  const auto j = chat_completion_response(req, r, *tok, meta);
  const auto& m0 = j["choices"][0]["message"];
  EXPECT_EQ(m0["content"], "Checking.");
  ASSERT_EQ(m0["tool_calls"].size(), 1u);
  EXPECT_EQ(m0["tool_calls"][0]["type"], "function");
  EXPECT_EQ(m0["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m0["tool_calls"][0]["function"]["arguments"], R"({"city":"Oslo"})");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_EQ(j["choices"][1]["message"]["content"], "No tool needed.");
  EXPECT_FALSE(j["choices"][1]["message"].contains("tool_calls"));
  EXPECT_EQ(j["choices"][1]["finish_reason"], "stop");
}

}  // namespace
}  // namespace db::api

// Tool calls read back out of model output: each format's calls parse, text
// around them is content, malformed calls stay content, the streaming parser
// gives the same result for every way the text is cut into pieces, and what each
// supported chat template renders for an assistant's tool calls parses back to
// the same calls.
#include "chat/tool_call_format.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"

namespace db::chat {
namespace {

std::string read_template(const std::string& name) {
  std::ifstream f(std::string(DB_SOURCE_DIR) + "/tests/data/chat/templates/" + name + ".jinja");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(ToolCallFormat, ReadFromTheTemplate) {
  EXPECT_EQ(tool_call_format_of_template(read_template("qwen2.5-instruct")), ToolCallFormat::Hermes);
  EXPECT_EQ(tool_call_format_of_template(read_template("deepseek-v3")), ToolCallFormat::DeepSeekV3);
  EXPECT_EQ(tool_call_format_of_template(read_template("deepseek-r1")), ToolCallFormat::DeepSeekV3);
  EXPECT_EQ(tool_call_format_of_template(read_template("deepseek-r1-0528")), ToolCallFormat::DeepSeekV3);
  EXPECT_EQ(tool_call_format_of_template(read_template("smollm2")), ToolCallFormat::None);
  EXPECT_EQ(tool_call_format_of_template(read_template("qwen2-instruct")), ToolCallFormat::None);
  for (ToolCallFormat f : {ToolCallFormat::None, ToolCallFormat::Hermes, ToolCallFormat::DeepSeekV3})
    EXPECT_EQ(tool_call_format_named(tool_call_format_name(f)), f);
  EXPECT_FALSE(tool_call_format_named("mistral"));
}

TEST(ToolCallFormat, HermesCallsAndContent) {
  ToolCallText t = parse_tool_calls(ToolCallFormat::Hermes,
                                    "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
                                    "\"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": "
                                    "2, \"b\": 3}}\n</tool_call>");
  EXPECT_EQ(t.content, "Let me look.");
  ASSERT_EQ(t.calls.size(), 2u);
  EXPECT_EQ(t.calls[0].name, "get_weather");
  EXPECT_EQ(t.calls[0].arguments, "{\"city\":\"Paris\"}");
  EXPECT_EQ(t.calls[1].name, "add");
  EXPECT_EQ(t.calls[1].arguments, "{\"a\":2,\"b\":3}");
  t = parse_tool_calls(ToolCallFormat::Hermes, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>");
  ASSERT_EQ(t.calls.size(), 1u);
  EXPECT_EQ(t.calls[0].arguments, "{\"x\":1}") << "arguments given as JSON text";
  EXPECT_EQ(t.content, "");
  t = parse_tool_calls(ToolCallFormat::Hermes, "<tool_call>{\"name\": \"f\"}</tool_call>");
  ASSERT_EQ(t.calls.size(), 1u);
  EXPECT_EQ(t.calls[0].arguments, "{}");
}

TEST(ToolCallFormat, MalformedCallsStayContent) {
  for (const std::string text :
       {"<tool_call>not json</tool_call>", "<tool_call>{\"arguments\": {}}</tool_call>",
        "<tool_call>{\"name\": \"f\", \"arguments\": [1]}</tool_call>", "a <tool_call> b",
        "<tool_call>{\"name\": \"two words\"}</tool_call>"}) {
    ToolCallText t = parse_tool_calls(ToolCallFormat::Hermes, text);
    EXPECT_TRUE(t.calls.empty()) << text;
    EXPECT_EQ(t.content, text);
  }
  ToolCallText t = parse_tool_calls(ToolCallFormat::None, "<tool_call>{\"name\": \"f\"}</tool_call>");
  EXPECT_TRUE(t.calls.empty()) << "no format reads no calls";
}

TEST(ToolCallFormat, AnUnterminatedCallThatParsesCounts) {
  ToolCallText t = parse_tool_calls(ToolCallFormat::Hermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n");
  ASSERT_EQ(t.calls.size(), 1u);
  t = parse_tool_calls(ToolCallFormat::Hermes, "<tool_call>\n{\"name\": \"f\", \"argu");
  EXPECT_TRUE(t.calls.empty());
  EXPECT_EQ(t.content, "<tool_call>\n{\"name\": \"f\", \"argu");
}

TEST(ToolCallFormat, DeepSeekV3Calls) {
  const std::string v3 =
      "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": "
      "\"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>add\n```json\n{\"a\": 2}\n```"
      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  ToolCallText t = parse_tool_calls(ToolCallFormat::DeepSeekV3, v3);
  EXPECT_EQ(t.content, "Checking.");
  ASSERT_EQ(t.calls.size(), 2u);
  EXPECT_EQ(t.calls[0].name, "get_weather");
  EXPECT_EQ(t.calls[0].arguments, "{\"city\":\"Paris\"}");
  EXPECT_EQ(t.calls[1].name, "add");
  t = parse_tool_calls(ToolCallFormat::DeepSeekV3,
                       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"x\": 1}<｜tool▁call▁end｜>"
                       "<｜tool▁calls▁end｜>");
  ASSERT_EQ(t.calls.size(), 1u) << "V3.1's form";
  EXPECT_EQ(t.calls[0].name, "f");
  EXPECT_EQ(t.calls[0].arguments, "{\"x\":1}");
  EXPECT_EQ(t.content, "");
}

// Every cut of `text` into three pieces streams to parse_tool_calls' result.
void expect_stream_matches(ToolCallFormat f, const std::string& text) {
  const ToolCallText want = parse_tool_calls(f, text);
  for (size_t i = 0; i <= text.size(); i += 1)
    for (size_t j = i; j <= text.size(); j += 3) {
      ToolCallStreamParser p(f);
      ToolCallText got;
      for (const std::string& piece : {text.substr(0, i), text.substr(i, j - i), text.substr(j)}) {
        ToolCallText d = p.push(piece);
        got.content += d.content;
        for (auto& c : d.calls) got.calls.push_back(c);
      }
      ToolCallText d = p.flush();
      got.content += d.content;
      for (auto& c : d.calls) got.calls.push_back(c);
      ASSERT_EQ(got.content, want.content) << "cut at " << i << ", " << j;
      ASSERT_EQ(got.calls.size(), want.calls.size()) << "cut at " << i << ", " << j;
      for (size_t k = 0; k < got.calls.size(); ++k) {
        EXPECT_EQ(got.calls[k].name, want.calls[k].name);
        EXPECT_EQ(got.calls[k].arguments, want.calls[k].arguments);
      }
    }
}

TEST(ToolCallStreamParser, AnyCutGivesTheWholeParse) {
  expect_stream_matches(ToolCallFormat::Hermes,
                        "Sure. <tool_call>{\"name\": \"f\", \"arguments\": {\"q\": \"<tool\"}}</tool_call>\n"
                        "<tool_call>{\"name\": \"g\"}</tool_call> and <tool_ca");
  expect_stream_matches(ToolCallFormat::DeepSeekV3,
                        "x<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```"
                        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>");
}

TEST(ToolCallStreamParser, ContentIsNotHeldBackNeedlessly) {
  ToolCallStreamParser p(ToolCallFormat::Hermes);
  EXPECT_EQ(p.push("Hello there").content, "Hello there");
  EXPECT_EQ(p.push(" <tool").content, "") << "may be a call's start; the space before it waits too";
  EXPECT_EQ(p.push("box>").content, " <toolbox>");
}

// What a template renders for an assistant turn with tool calls, read back.
void expect_template_round_trip(const std::string& name, bool arguments_as_text) {
  const std::string src = read_template(name);
  const ToolCallFormat format = tool_call_format_of_template(src);
  ASSERT_NE(format, ToolCallFormat::None) << name;
  const ChatTemplate tmpl = ChatTemplate::parse(src);
  using OJson = nlohmann::ordered_json;
  auto args = [&](const char* text) { return arguments_as_text ? OJson(text) : OJson::parse(text); };
  OJson calls = OJson::array(
      {{{"type", "function"}, {"function", {{"name", "get_weather"}, {"arguments", args("{\"city\": \"Paris\"}")}}}},
       {{"type", "function"}, {"function", {{"name", "add"}, {"arguments", args("{\"a\": 2, \"b\": 3}")}}}}});
  OJson user = {{"role", "user"}, {"content", "Q"}};
  OJson before = OJson::array({user});
  OJson after = OJson::array({user, {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", calls}}});
  const std::string prompt = apply_chat_template(tmpl, before, true, "<s>", "</s>");
  const std::string full =
      apply_chat_template(tmpl, after, false, "<s>", "</s>", OJson::object(), /*keep_null_call_content=*/true);
  ASSERT_EQ(full.substr(0, prompt.size()), prompt) << name << ": the turn extends the prompt";
  const ToolCallText t = parse_tool_calls(format, full.substr(prompt.size()));
  ASSERT_EQ(t.calls.size(), 2u) << name << ": " << full.substr(prompt.size());
  EXPECT_EQ(t.calls[0].name, "get_weather");
  EXPECT_EQ(t.calls[0].arguments, "{\"city\":\"Paris\"}");
  EXPECT_EQ(t.calls[1].name, "add");
  EXPECT_EQ(t.calls[1].arguments, "{\"a\":2,\"b\":3}");
}

TEST(ToolCallFormat, HermesTemplateRendersCallsThatParseBack) {
  expect_template_round_trip("qwen2.5-instruct", /*arguments_as_text=*/false);
}

TEST(ToolCallFormat, DeepSeekTemplatesRenderCallsThatParseBack) {
  expect_template_round_trip("deepseek-v3", /*arguments_as_text=*/true);
  expect_template_round_trip("deepseek-r1", /*arguments_as_text=*/true);
}

}  // namespace
}  // namespace db::chat

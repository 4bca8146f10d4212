// How a model writes tool calls in its output, and reading them back:
//   hermes (Qwen2.5, Hermes, ChatML models):
//     <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>
//   deepseek_v3 (DeepSeek-V3, R1 and R1-0528):
//     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
//     (and V3.1's <｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜>)
// A model's format is read from its chat template (the markers it renders).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace db::chat {

enum class ToolCallFormat { None, Hermes, DeepSeekV3 };

// "none", "hermes", "deepseek_v3".
const char* tool_call_format_name(ToolCallFormat f);
// The inverse of tool_call_format_name; nullopt for other names.
std::optional<ToolCallFormat> tool_call_format_named(std::string_view name);
// The format whose markers the template renders; None when it shows none.
ToolCallFormat tool_call_format_of_template(std::string_view template_source);

struct ParsedToolCall {
  std::string name;
  std::string arguments;  // a JSON object as compact text
};

struct ToolCallText {
  std::string content;                // the text outside the calls
  std::vector<ParsedToolCall> calls;  // in the order written
};

// Reads streamed output: text outside calls is content, each call is returned
// once its end marker arrives. Text that may be the start of a marker is held
// back until decided. A call whose body does not parse (no name, arguments not
// a JSON object) stays in the content as written. Whitespace next to a call is
// dropped from the content. Concatenating every push's and flush's parts gives
// parse_tool_calls of the whole text.
class ToolCallStreamParser {
 public:
  explicit ToolCallStreamParser(ToolCallFormat format) : format_(format) {}
  ToolCallText push(std::string_view text);
  // The end of the output: an unterminated call that parses counts (the output
  // may have been cut by max_tokens); whatever else was held back is content.
  ToolCallText flush();

 private:
  void scan(ToolCallText& out);
  void add_content(ToolCallText& out, std::string_view s);
  void end_call(ToolCallText& out, bool terminated);

  ToolCallFormat format_;
  std::string pending_;     // outside a call: text not yet scanned for markers
  std::string call_;        // inside a call: its body so far
  bool in_call_ = false;
  std::string held_space_;  // trailing whitespace of the content, kept until what follows decides
  bool saw_call_ = false;
};

// The whole output at once.
ToolCallText parse_tool_calls(ToolCallFormat format, std::string_view text);

}  // namespace db::chat

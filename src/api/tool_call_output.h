// Tool calls read out of one choice's answer (its content after any reasoning),
// as tool_fields.h says each tool_choice is honoured, both for a whole answer and
// for a streamed one. Streamed calls come as OpenAI tool-call deltas: a call's
// first delta carries its index, id, type and name; later ones more of its
// arguments. A named choice streams its arguments as they are written; calls in
// the model's own format come whole once each ends; a required choice's list
// comes whole at the end of the answer.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/tool_fields.h"
#include "chat/chat_message.h"
#include "chat/tool_call_format.h"

namespace db::api {

struct ToolCallDelta {
  size_t index = 0;
  bool first = false;    // the call's first delta: id and name are set
  std::string id, name;
  std::string arguments;  // more of the arguments' JSON text
};

struct ToolCallOutput {
  std::string content;  // the text that is not a call
  std::vector<ToolCallDelta> calls;
};

class ToolCallExtractor {
 public:
  // `format`: how the model writes calls (used with tool_choice auto).
  ToolCallExtractor(const ToolRequest& req, chat::ToolCallFormat format);
  ToolCallOutput push(std::string_view text);
  ToolCallOutput flush();  // the end of the answer
  size_t calls() const { return next_index_; }

 private:
  void add_call(ToolCallOutput& out, std::string name, std::string arguments);

  ToolRequest::Choice choice_;
  std::string named_;
  bool parallel_;
  chat::ToolCallStreamParser parser_;
  std::string required_text_;  // Required: the JSON list so far
  size_t next_index_ = 0;
};

// The whole answer: content and calls (with new "call_..." ids).
struct ToolCallAnswer {
  std::string content;
  std::vector<ToolCall> calls;
};
ToolCallAnswer extract_tool_calls(const ToolRequest& req, chat::ToolCallFormat format, std::string_view text);

// The "tool_calls" list of a message, and of a streamed delta.
nlohmann::ordered_json tool_calls_json(const std::vector<ToolCall>& calls);
nlohmann::ordered_json tool_call_deltas_json(const std::vector<ToolCallDelta>& deltas);

}  // namespace db::api

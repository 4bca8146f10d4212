// One turn of a conversation, as a chat template receives it.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace db {

// A call an assistant turn made (OpenAI's message.tool_calls[i]).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON text, as the API carries it
};

struct ChatMessage {
  std::string role;                    // "system", "user", "assistant" or "tool"
  std::optional<std::string> content;  // message text; none only for an assistant turn that made tool calls
  std::vector<ToolCall> tool_calls;    // assistant turns
  std::string tool_call_id;            // tool turns: the call this answers
};

}  // namespace db

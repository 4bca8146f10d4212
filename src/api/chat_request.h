// POST /v1/chat/completions: the request body as plain values.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/request_common.h"
#include "api/tool_fields.h"
#include "chat/chat_message.h"

namespace db::api {

struct ChatCompletionRequest {
  CommonFields common;                 // model, sampling, stop, n, priority, ...
  std::vector<ChatMessage> messages;   // roles system/user/assistant/tool; text content (parts joined by "\n")
  std::optional<int32_t> max_tokens;   // max_completion_tokens, else max_tokens; unset: the rest of the context
  bool logprobs = false;               // return the chosen tokens' logprobs
  int32_t top_logprobs = 0;            // alternatives per token, in [0, 20]; needs logprobs
  ToolRequest tools;                   // tools, tool_choice, parallel_tool_calls
};

// Parses and validates a /v1/chat/completions body (fields as request_fields.h allows;
// every message with content, except an assistant turn with tool_calls; tool turns
// with tool_call_id; at least one message from the user). A tool_choice of
// "required" or a named function constrains the output (common.guided), so it
// cannot be combined with response_format or guided_*. Throws ApiError naming the param.
ChatCompletionRequest parse_chat_request(const Json& body);

}  // namespace db::api

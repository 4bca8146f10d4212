// POST /v1/chat/completions: the request body as plain values.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/request_common.h"
#include "chat/chat_message.h"

namespace db::api {

struct ChatCompletionRequest {
  CommonFields common;                 // model, sampling, stop, n, priority, ...
  std::vector<ChatMessage> messages;   // roles system/user/assistant; text content (parts joined by "\n")
  std::optional<int32_t> max_tokens;   // max_completion_tokens, else max_tokens; unset: the rest of the context
  bool logprobs = false;               // return the chosen tokens' logprobs
  int32_t top_logprobs = 0;            // alternatives per token, in [0, 20]; needs logprobs
};

// Parses and validates a /v1/chat/completions body (fields as request_fields.h allows;
// every message with content, at least one from the user). Throws ApiError naming the param.
ChatCompletionRequest parse_chat_request(const Json& body);

}  // namespace db::api

// OpenAI response bodies built from a finished GenerationResult:
//   completion:       {"id", "object": "text_completion", "created", "model", "choices": [{"index",
//                      "text", "logprobs", "finish_reason"}], "usage"}
//   chat.completion:  {"id", "object": "chat.completion", "created", "model", "choices": [{"index",
//                      "message": {"role": "assistant", "content", "reasoning_content"?, "tool_calls"?},
//                      "logprobs", "finish_reason"}], "usage"}
//   usage:            {"prompt_tokens", "completion_tokens", "total_tokens"}
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/generation_result.h"
#include "chat/tool_call_format.h"

namespace db {
class Tokenizer;
}

namespace db::api {

struct ResponseMeta {
  std::string id;       // "cmpl-..." / "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;    // model name echoed back
  bool split_reasoning = false;  // chat: "<think>" text goes to reasoning_content (chat/reasoning_split.h)
  chat::ToolCallFormat tool_format = chat::ToolCallFormat::None;  // chat with tool_choice auto: how calls are written
};

// {"id", "object", "created", "model"}: the head of every response body and stream chunk.
nlohmann::ordered_json response_envelope(const char* object, const ResponseMeta& meta);

// finish_reason_name(r) as a JSON string ("stop", "length", "abort", "error"); null while
// unfinished. A chat answer that stopped after making tool calls finished for "tool_calls".
nlohmann::ordered_json finish_reason_json(FinishReason r, bool made_tool_calls = false);

// "<prefix><24 random hex digits>", e.g. new_response_id("cmpl-").
std::string new_response_id(const std::string& prefix);
// Current time as Unix seconds.
int64_t unix_time_now();

nlohmann::ordered_json usage_json(const GenerationResult& result);

// Completions' logprobs of c's tokens: {"tokens", "token_logprobs", "top_logprobs", "text_offset"};
// text offsets count from `first_offset` (the echo length, or where a streamed piece starts).
// With c's prompt scored (echo), the prompt's tokens come first, their offsets from
// `prompt_offset`; the first has null logprobs.
nlohmann::ordered_json completion_logprobs(const ChoiceOutput& c, size_t first_offset, const Tokenizer& tok,
                                           size_t prompt_offset = 0);
// Chat logprobs of c's tokens: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}]}.
nlohmann::ordered_json chat_logprobs(const ChoiceOutput& c, const Tokenizer& tok);

// `tok` turns token ids into the strings of the logprobs objects.
nlohmann::ordered_json completion_response(const CompletionRequest& req, const GenerationResult& result,
                                           const Tokenizer& tok, const ResponseMeta& meta);
nlohmann::ordered_json chat_completion_response(const ChatCompletionRequest& req, const GenerationResult& result,
                                                const Tokenizer& tok, const ResponseMeta& meta);

}  // namespace db::api

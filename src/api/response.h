// OpenAI response bodies built from a finished GenerationResult:
//   completion:       {"id", "object": "text_completion", "created", "model", "choices": [{"index",
//                      "text", "logprobs", "finish_reason"}], "usage"}
//   chat.completion:  {"id", "object": "chat.completion", "created", "model", "choices": [{"index",
//                      "message": {"role": "assistant", "content"}, "logprobs", "finish_reason"}], "usage"}
//   usage:            {"prompt_tokens", "completion_tokens", "total_tokens"}
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "api/generation_result.h"

namespace db {
class Tokenizer;
}

namespace db::api {

struct ResponseMeta {
  std::string id;       // "cmpl-..." / "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;    // model name echoed back
};

// "stop", "length", "abort", "error"; null while unfinished.
nlohmann::ordered_json finish_reason_json(FinishReason r);

// "<prefix><24 random hex digits>", e.g. new_response_id("cmpl-").
std::string new_response_id(const std::string& prefix);
// Current time as Unix seconds.
int64_t unix_time_now();

nlohmann::ordered_json usage_json(const GenerationResult& result);

// `tok` turns token ids into the strings of the logprobs objects.
nlohmann::ordered_json completion_response(const CompletionRequest& req, const GenerationResult& result,
                                           const Tokenizer& tok, const ResponseMeta& meta);
nlohmann::ordered_json chat_completion_response(const ChatCompletionRequest& req, const GenerationResult& result,
                                                const Tokenizer& tok, const ResponseMeta& meta);

}  // namespace db::api

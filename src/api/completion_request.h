// POST /v1/completions: the request body as plain values.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/request_common.h"

namespace db::api {

// One prompt: text, or token ids given directly.
struct PromptInput {
  bool is_tokens = false;        // true: `tokens` holds the prompt; false: `text` does
  std::string text;              // prompt text (tokenized with the model's BOS rule)
  std::vector<int32_t> tokens;   // prompt token ids, used as given
};

struct CompletionRequest {
  CommonFields common;                 // model, sampling, stop, n, priority, ...
  std::vector<PromptInput> prompts;    // one or more prompts; each gets n choices
  std::optional<int32_t> max_tokens;   // unset: 16 (OpenAI's default), capped by the context
  std::optional<int32_t> logprobs;     // top logprobs per token, in [0, 20]; unset: none
  bool echo = false;                   // the choice text starts with the prompt (scored too, with logprobs)
  std::optional<std::string> suffix;   // fill in the middle: the text that follows the completion
  // best_of > n: best_of samples are generated per prompt and the n with the highest
  // cumulative logprob are returned (usage counts all of them); 0 = n. Not with stream.
  int32_t best_of = 0;
};

// Parses and validates a /v1/completions body (fields as request_fields.h allows).
// Throws ApiError naming the param.
CompletionRequest parse_completion_request(const Json& body);

}  // namespace db::api

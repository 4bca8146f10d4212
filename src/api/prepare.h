// A parsed request turned into engine requests: prompts tokenized (chat rendered
// with the model's template), token budget resolved against the context, sampling
// and stop conditions copied over. Runs on the caller's thread, never the engine's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "api/chat_request.h"
#include "api/completion_request.h"
#include "engine/engine_types.h"

namespace db {
class ModelBundle;
}

namespace db::api {

// Tokens a completion may generate when the request does not say (OpenAI's default).
inline constexpr int32_t kDefaultCompletionMaxTokens = 16;

struct PreparedRequest {
  std::vector<EngineRequest> parts;     // one per prompt; choices of part i come before those of part i+1
  std::vector<std::string> echo_texts;  // per part: the text every choice of it starts with ("" without echo)
};

// Throws ApiError: a prompt longer than the context (code context_length_exceeded),
// max_tokens beyond what fits, token ids outside the vocabulary, an empty prompt.
PreparedRequest prepare_completion(const CompletionRequest& req, const ModelBundle& bundle, int64_t max_context);
// Also throws ApiError when the model has no chat template or the template fails, and
// for tool_choice auto when the model has no tool-call format. The template sees the
// tools unless tool_choice is none.
PreparedRequest prepare_chat(const ChatCompletionRequest& req, const ModelBundle& bundle, int64_t max_context);

// Generated tokens allowed for a prompt of `prompt_len` tokens: `requested` when it
// fits the context, the default (capped to fit) when unset. Throws ApiError when
// the prompt leaves no room or `requested` does not fit; `prompt_param` names the
// prompt field ("prompt", "messages") in the error.
int32_t resolve_max_tokens(int64_t prompt_len, std::optional<int32_t> requested, int64_t default_tokens,
                           int64_t max_context, const std::string& prompt_param);

}  // namespace db::api

// Server-sent-event pieces of a streamed response (stream: true):
//   completions:  {"id", "object": "text_completion", "created", "model",
//                  "choices": [{"index", "text", "logprobs", "finish_reason"}]}
//   chat:         {"id", "object": "chat.completion.chunk", "created", "model",
//                  "choices": [{"index", "delta": {"role"?, "content"?, "reasoning_content"?, "tool_calls"?},
//                               "logprobs", "finish_reason"}]}
//   usage (last, with stream_options.include_usage): same envelope, "choices": [], "usage"
// each framed as "data: <json>\n\n", and the stream closed by "data: [DONE]\n\n".
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/response.h"

namespace db::api {

inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";
inline constexpr const char* kCompletionChunkObject = "text_completion";
inline constexpr const char* kChatChunkObject = "chat.completion.chunk";

// Compact JSON text; invalid UTF-8 (e.g. a token holding half a character) becomes U+FFFD.
std::string dump_json(const nlohmann::ordered_json& v);
// "data: <json>\n\n".
std::string sse_data(const nlohmann::ordered_json& payload);

// One completions chunk of choice `index`; `logprobs` null when not requested.
nlohmann::ordered_json completion_chunk(const ResponseMeta& meta, size_t index, const std::string& text,
                                        nlohmann::ordered_json logprobs, FinishReason finish);
// One chat chunk of choice `index` carrying `delta` ({"role": ...} / {"content": ...} /
// {"reasoning_content": ...} / {"tool_calls": [...]} / {}).
nlohmann::ordered_json chat_chunk(const ResponseMeta& meta, size_t index, nlohmann::ordered_json delta,
                                  nlohmann::ordered_json logprobs, FinishReason finish, bool made_tool_calls = false);
// The final usage chunk: `object` is kCompletionChunkObject or kChatChunkObject.
nlohmann::ordered_json usage_chunk(const char* object, const ResponseMeta& meta, nlohmann::ordered_json usage);

}  // namespace db::api

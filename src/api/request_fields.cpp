#include "api/request_fields.h"

#include <algorithm>
#include <array>

#include "api/api_error.h"

namespace db::api {

namespace {

constexpr std::array<std::string_view, 27> kCommonFields = {
    "model",          "temperature", "top_p",          "top_k",      "min_p",
    "presence_penalty", "frequency_penalty", "repetition_penalty", "seed", "n",
    "stop",           "stop_token_ids", "ignore_eos",   "skip_special_tokens", "priority",
    "stream",         "stream_options", "user",         "max_tokens", "logprobs",
    "timeout",        "response_format", "guided_json", "guided_regex", "guided_grammar",
    "guided_choice", "logit_bias"};
constexpr std::array<std::string_view, 4> kCompletionFields = {"prompt", "echo", "best_of", "suffix"};
constexpr std::array<std::string_view, 6> kChatFields = {"messages", "max_completion_tokens", "top_logprobs",
                                                         "tools",    "tool_choice",           "parallel_tool_calls"};
constexpr std::array<std::string_view, 2> kIgnoredFields = {"metadata", "service_tier"};
constexpr std::array<std::string_view, 3> kUnsupportedFields = {"best_of", "functions", "function_call"};

constexpr std::array<std::string_view, 5> kMessageFields = {"role", "content", "name", "tool_calls", "tool_call_id"};
constexpr std::array<std::string_view, 3> kUnsupportedMessageFields = {"function_call", "refusal", "audio"};

template <size_t N>
bool among(const std::array<std::string_view, N>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

// Shortens a client-chosen key for an error message.
std::string shown(std::string_view key) {
  constexpr size_t kMax = 64;
  return key.size() <= kMax ? std::string(key) : std::string(key.substr(0, kMax)) + "...";
}

[[noreturn]] void unknown(std::string_view key, const std::string& param, const std::string& where) {
  throw ApiError("unrecognized request argument supplied: '" + shown(key) + "' is not a field of " + where +
                     " this server reads",
                 param, "unknown_parameter");
}

[[noreturn]] void unsupported(std::string_view key, const std::string& param) {
  throw ApiError("'" + shown(key) + "' is not supported by this server; leave it out (or null)", param,
                 "unsupported_parameter");
}

}  // namespace

void check_body_key(Endpoint endpoint, std::string_view key, const Json* value) {
  const bool chat = endpoint == Endpoint::ChatCompletions;
  if (among(kCommonFields, key) || among(kIgnoredFields, key)) return;
  if (chat ? among(kChatFields, key) : among(kCompletionFields, key)) return;
  const std::string param = shown(key);
  if (!among(kUnsupportedFields, key)) unknown(key, param, std::string("a ") + endpoint_url(endpoint) + " request");
  if (value && !value->is_null()) unsupported(key, param);
}

void check_body_fields(Endpoint endpoint, const Json& body) {
  if (!body.is_object()) return;
  for (auto it = body.begin(); it != body.end(); ++it) check_body_key(endpoint, it.key(), &it.value());
}

void check_message_fields(const Json& message, const std::string& param) {
  if (!message.is_object()) return;
  for (auto it = message.begin(); it != message.end(); ++it) {
    const std::string& key = it.key();
    if (among(kMessageFields, key)) continue;
    const std::string p = param + "." + shown(key);
    if (!among(kUnsupportedMessageFields, key)) unknown(key, p, "a chat message");
    if (!it.value().is_null()) unsupported(key, p);
  }
}

}  // namespace db::api

#include "api/chat_request.h"

#include <algorithm>

#include "api/api_error.h"
#include "api/request_fields.h"

namespace db::api {

namespace {

// "content": a string, or a non-empty list of {"type": "text", "text": ...} parts joined
// by "\n". Required, and never null (OpenAI allows null only beside tool_calls, which
// this server does not support).
std::string parse_content(const Json& msg, const std::string& param) {
  const auto it = msg.find("content");
  if (it == msg.end()) throw ApiError("'" + param + "' is required", param, "missing_required_parameter");
  const Json* v = &*it;
  if (v->is_string()) return v->get<std::string>();
  if (!v->is_array())
    throw ApiError("'" + param + "' must be a string or a list of content parts, got " + json_type_name(*v), param,
                   "invalid_type");
  if (v->empty()) throw ApiError("'" + param + "' must not be an empty list", param, "invalid_value");
  std::string text;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& part = (*v)[i];
    const std::string p = param + "[" + std::to_string(i) + "]";
    if (!part.is_object())
      throw ApiError("'" + p + "' must be an object {\"type\": \"text\", \"text\": ...}, got " +
                         json_type_name(part),
                     p, "invalid_type");
    const std::string type = opt_string(part, "type", p + ".type").value_or("");
    if (type != "text")
      throw ApiError("'" + p + ".type' must be \"text\" (only text content is supported), got \"" + type + "\"",
                     p + ".type", "invalid_value");
    auto t = opt_string(part, "text", p + ".text");
    if (!t) throw ApiError("'" + p + ".text' is required", p + ".text", "missing_required_parameter");
    if (i > 0) text += "\n";
    text += *t;
  }
  return text;
}

ChatMessage parse_message(const Json& msg, size_t index) {
  const std::string param = "messages[" + std::to_string(index) + "]";
  if (!msg.is_object())
    throw ApiError("'" + param + "' must be an object, got " + json_type_name(msg), param, "invalid_type");
  check_message_fields(msg, param);
  auto role = opt_string(msg, "role", param + ".role");
  if (!role) throw ApiError("'" + param + ".role' is required", param + ".role", "missing_required_parameter");
  if (*role == "developer") role = "system";
  if (*role != "system" && *role != "user" && *role != "assistant")
    throw ApiError("'" + param + ".role' must be \"system\", \"user\" or \"assistant\", got \"" + *role + "\"",
                   param + ".role", "invalid_value");
  return {*role, parse_content(msg, param + ".content")};
}

}  // namespace

ChatCompletionRequest parse_chat_request(const Json& body) {
  check_body_fields(Endpoint::ChatCompletions, body);
  ChatCompletionRequest r;
  r.common = parse_common_fields(body);
  const Json* msgs = find_field(body, "messages");
  if (!msgs) throw ApiError("'messages' is required", "messages", "missing_required_parameter");
  if (!msgs->is_array())
    throw ApiError("'messages' must be a list of messages, got " + json_type_name(*msgs), "messages", "invalid_type");
  if (msgs->empty()) throw ApiError("'messages' must hold at least one message", "messages", "invalid_value");
  for (size_t i = 0; i < msgs->size(); ++i) r.messages.push_back(parse_message((*msgs)[i], i));
  // Chat templates render a reply to the user; a conversation without a user turn has none to answer.
  if (std::none_of(r.messages.begin(), r.messages.end(), [](const ChatMessage& m) { return m.role == "user"; }))
    throw ApiError("'messages' must hold at least one message with role \"user\"", "messages", "invalid_value");
  const auto max_tokens = parse_max_tokens(body, "max_tokens");
  r.max_tokens = parse_max_tokens(body, "max_completion_tokens");
  if (!r.max_tokens) r.max_tokens = max_tokens;
  r.logprobs = opt_bool(body, "logprobs").value_or(false);
  if (auto top = opt_integer(body, "top_logprobs", 0, kMaxLogprobs)) {
    if (!r.logprobs)
      throw ApiError("'top_logprobs' requires 'logprobs' to be true", "top_logprobs", "invalid_value");
    r.top_logprobs = static_cast<int32_t>(*top);
  }
  if (r.logprobs) r.common.sampling.logprobs = r.top_logprobs;
  return r;
}

}  // namespace db::api

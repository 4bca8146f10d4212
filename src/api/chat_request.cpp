#include "api/chat_request.h"

#include <algorithm>

#include "api/api_error.h"
#include "api/request_fields.h"

namespace db::api {

namespace {

// "content": a string, or a non-empty list of {"type": "text", "text": ...} parts joined
// by "\n". Required, and never null (except beside tool_calls: parse_message).
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

// An assistant turn's "tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}].
std::vector<ToolCall> parse_tool_calls(const Json& msg, const std::string& param) {
  std::vector<ToolCall> calls;
  const Json* list = find_field(msg, "tool_calls");
  if (!list) return calls;
  if (!list->is_array()) invalid_param("'" + param + "' must be a list, got " + json_type_name(*list), param, "invalid_type");
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& c = (*list)[i];
    const std::string p = param + "[" + std::to_string(i) + "]";
    if (!c.is_object()) invalid_param("'" + p + "' must be an object, got " + json_type_name(c), p, "invalid_type");
    if (opt_string(c, "type", p + ".type").value_or("function") != "function")
      invalid_param("'" + p + ".type' must be \"function\"", p + ".type");
    const Json* fn = find_field(c, "function");
    if (!fn || !fn->is_object()) invalid_param("'" + p + ".function' must be an object holding 'name'", p + ".function");
    ToolCall call;
    call.id = opt_string(c, "id", p + ".id").value_or("");
    call.name = opt_string(*fn, "name", p + ".function.name").value_or("");
    if (call.name.empty()) invalid_param("'" + p + ".function.name' is required", p + ".function.name");
    call.arguments = opt_string(*fn, "arguments", p + ".function.arguments").value_or("{}");
    calls.push_back(std::move(call));
  }
  return calls;
}

ChatMessage parse_message(const Json& msg, size_t index) {
  const std::string param = "messages[" + std::to_string(index) + "]";
  if (!msg.is_object())
    throw ApiError("'" + param + "' must be an object, got " + json_type_name(msg), param, "invalid_type");
  check_message_fields(msg, param);
  auto role = opt_string(msg, "role", param + ".role");
  if (!role) throw ApiError("'" + param + ".role' is required", param + ".role", "missing_required_parameter");
  if (*role == "developer") role = "system";
  if (*role != "system" && *role != "user" && *role != "assistant" && *role != "tool")
    invalid_param("'" + param + ".role' must be \"system\", \"user\", \"assistant\" or \"tool\", got \"" + *role + "\"",
        param + ".role");
  ChatMessage m;
  m.role = *role;
  if (m.role == "assistant") m.tool_calls = parse_tool_calls(msg, param + ".tool_calls");
  else if (find_field(msg, "tool_calls")) invalid_param("'" + param + ".tool_calls' belongs in assistant messages", param + ".tool_calls");
  if (m.role == "tool") {
    auto id = opt_string(msg, "tool_call_id", param + ".tool_call_id");
    if (!id) invalid_param("'" + param + ".tool_call_id' is required in tool messages", param + ".tool_call_id",
                 "missing_required_parameter");
    m.tool_call_id = *id;
  } else if (find_field(msg, "tool_call_id")) {
    invalid_param("'" + param + ".tool_call_id' belongs in tool messages", param + ".tool_call_id");
  }
  if (m.tool_calls.empty() || find_field(msg, "content")) m.content = parse_content(msg, param + ".content");
  return m;
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
  r.tools = parse_tool_fields(body);
  if (std::optional<GrammarSpec> spec = r.tools.constraint()) {
    if (r.common.guided)
      invalid_param("'tool_choice' \"required\" or a named function constrains the output, so it cannot be combined with '" +
              r.common.guided->field + "'",
          "tool_choice");
    r.common.guided = GuidedOutput{std::move(*spec), "tool_choice"};
  }
  return r;
}

}  // namespace db::api

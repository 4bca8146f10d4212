// Which top-level fields a generation request body may hold. A field is one of:
//   read:        parsed and used (see CommonFields, CompletionRequest, ChatCompletionRequest);
//   ignored:     harmless bookkeeping OpenAI clients may send, accepted and not used:
//                "metadata" and "service_tier" (they change nothing in the output);
//   unsupported: an OpenAI field this server does not implement (best_of on chat,
//                suffix, tools, tool_choice, parallel_tool_calls, functions,
//                function_call): 400 naming it, unless its value is null;
//   unknown:     anything else: 400 naming it, whatever its value.
// Messages of a chat request hold "role", "content" and optionally "name" (ignored);
// "tool_calls", "tool_call_id", "function_call", "refusal" and "audio" are unsupported
// (null allowed), any other key is unknown.
#pragma once
#include <string>
#include <string_view>

#include "api/endpoint.h"
#include "api/json_fields.h"

namespace db::api {

// Throws ApiError (param: `key`) when `key` is unknown for `endpoint`, or unsupported
// and `value` is not null. `value` == nullptr: not read yet, so only unknown keys throw.
void check_body_key(Endpoint endpoint, std::string_view key, const Json* value);
// check_body_key for every key of `body` (an object).
void check_body_fields(Endpoint endpoint, const Json& body);
// The same rules for the keys of one chat message; `param` names it ("messages[2]").
void check_message_fields(const Json& message, const std::string& param);

}  // namespace db::api

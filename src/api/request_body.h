// A generation request body, from its bytes to a validated ApiRequest, in memory
// bounded by the limits (see bounded_json.h) rather than by the body's size.
#pragma once
#include <cstdint>
#include <string_view>

#include "api/bounded_json.h"
#include "api/openai_request.h"

namespace db {
class Tokenizer;
}

namespace db::api {

// The limits a server with context `max_context` (tokens) and tokenizer `tok` applies:
//   a token-id prompt: at most max_context - 1 ids (one must stay free to generate);
//   one string: at most the text max_context tokens can stand for, max_context *
//     tok.max_token_bytes() bytes (a longer one fits only by bytes the tokenizer drops);
//   all strings together: twice that (two full-context prompts);
//   values: 2 * max_context + 65536 (two full token prompts, and plenty of messages).
// A refused body thus costs at most about those bounds on top of its own bytes.
BodyLimits body_limits(int64_t max_context, const Tokenizer& tok);

// Parses and validates `body` for `endpoint` (parse_request_json, then parse_request).
// Throws ApiError naming the param.
ApiRequest parse_request_body(Endpoint endpoint, std::string_view body, const BodyLimits& limits = {});

}  // namespace db::api

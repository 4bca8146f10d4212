#include "api/request_body.h"

#include <algorithm>

#include "tokenizer/tokenizer.h"

namespace db::api {

BodyLimits body_limits(int64_t max_context, const Tokenizer& tok) {
  BodyLimits l;
  const auto context = static_cast<size_t>(std::max<int64_t>(max_context, 1));
  l.context_tokens = static_cast<int64_t>(context);
  l.max_prompt_tokens = context - 1;
  l.max_string_bytes = context * std::max<size_t>(tok.max_token_bytes(), 1);
  l.max_total_string_bytes = 2 * l.max_string_bytes;
  l.max_values = 2 * context + 65536;
  return l;
}

ApiRequest parse_request_body(Endpoint endpoint, std::string_view body, const BodyLimits& limits) {
  return parse_request(endpoint, parse_request_json(endpoint, body, limits));
}

}  // namespace db::api

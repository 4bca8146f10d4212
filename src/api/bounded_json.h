// JSON parsing whose memory is bounded before anything is built: a linear pre-scan
// refuses nesting deeper than a limit and strings longer than a limit (so the parser
// never buffers one), then a SAX parse builds the DOM while counting values and string
// bytes, so that a hostile body costs at most about limits.max_values JSON values and
// limits.max_total_string_bytes bytes of strings on top of its text.
// Every refusal is an ApiError naming the top-level field the offending part sits in.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "api/endpoint.h"
#include "api/json_fields.h"

namespace db::api {

struct BodyLimits {
  int max_depth = 64;                     // arrays/objects nested deeper are refused
  size_t max_values = size_t{1} << 20;    // JSON values (scalars and containers) in the whole text
  size_t max_string_bytes = size_t{16} << 20;  // bytes of one string once decoded (a \\u escape counted as 3)
  size_t max_total_string_bytes = size_t{32} << 20;  // bytes of all strings and keys together
  size_t max_prompt_tokens = size_t{1} << 20;  // token ids in one prompt array ("prompt" of a request body)
  int64_t context_tokens = 0;             // the context the limits derive from (0: none); for messages
};

// Parses `text` under `limits`. Throws ApiError: invalid JSON (code invalid_json), nesting
// too deep (nesting_too_deep), a string too long (string_too_long, or context_length_exceeded
// when limits.context_tokens is set; the same for the strings' total), too many values
// (too_many_values).
Json parse_json_bounded(std::string_view text, const BodyLimits& limits = {});

// As parse_json_bounded for a generation request body of `endpoint`, with its rules
// applied while parsing: a top-level key that is not a field of the endpoint is refused
// when it is read, before its value is (see request_fields.h), and a token-id prompt
// array longer than limits.max_prompt_tokens is refused when the count passes it (code
// context_length_exceeded, param "prompt" or "prompt[i]").
Json parse_request_json(Endpoint endpoint, std::string_view text, const BodyLimits& limits = {});

}  // namespace db::api

// The one place a request-target (RFC 9112 section 3.2) becomes the path that routing,
// authentication and every handler see, so that no two parsers can disagree on what
// a request names.
//
//   "/v1/models?x=1"            -> path "/v1/models", query "x=1"        (origin-form)
//   "http://host:8000/v1/models" -> path "/v1/models"                     (absolute-form)
//   "/v1/../%76%31/models"       -> path "/v1/models"  (decoded, dot segments resolved)
//   "v1/models", "*", "host:80"  -> rejected (not a form this server serves)
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace db::http {

struct RequestTarget {
  std::string path;   // starts with '/'; percent-decoded; no "." or ".." segments; empty segments kept
  std::string query;  // after the first '?', as sent ("" when none)
};

// The normalized target, or nullopt with `why` saying what is wrong: a target that is
// neither origin-form nor http(s) absolute-form, a fragment, a '%' not followed by two
// hex digits, an encoded '/', a control byte (decoded or not), or a ".." above the root.
std::optional<RequestTarget> parse_request_target(std::string_view target, std::string& why);

}  // namespace db::http

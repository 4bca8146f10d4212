// multipart/form-data request bodies (RFC 7578), as the file upload endpoint gets them:
//   Content-Type: multipart/form-data; boundary=XYZ
//   --XYZ CRLF Content-Disposition: form-data; name="file"; filename="a.jsonl" CRLF ... CRLF CRLF <bytes>
//   CRLF --XYZ ... CRLF --XYZ-- [epilogue]
// Malformed input throws api::ApiError (status 400) saying what is wrong.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace db::server {

// A header value split into its main value (lower-cased) and its ;-separated
// parameters (names lower-cased; quoted values unquoted, backslash escapes undone).
struct HeaderValue {
  std::string value;
  std::vector<std::pair<std::string, std::string>> params;
  // The parameter `lower_name`, or nullopt.
  std::optional<std::string> param(std::string_view lower_name) const;
};
HeaderValue parse_header_value(std::string_view text);

struct MultipartPart {
  std::string name;                       // Content-Disposition name
  std::optional<std::string> filename;    // Content-Disposition filename, when given
  std::string content_type;               // the part's Content-Type ("" when absent)
  std::string_view data;                  // the part's bytes: a view into the parsed body
};

// The boundary of a "multipart/form-data; boundary=..." Content-Type. Throws
// ApiError when the type is something else or the boundary is missing or invalid.
std::string multipart_boundary(std::string_view content_type);
// Every part of `body`, in order (their data views into `body`). Throws ApiError on a missing boundary line, a part
// without a name, a header without its blank line, or a missing closing boundary.
std::vector<MultipartPart> parse_multipart(std::string_view body, std::string_view boundary);

}  // namespace db::server

// Serialises HTTP/1.1 response heads and chunk frames into bytes for the write queue.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "http/request.h"

namespace db::http {

// How the body of a response is delimited.
enum class BodyFraming {
  content_length,  // Content-Length: <n>
  chunked,         // Transfer-Encoding: chunked
  until_close,     // neither; the body ends when the connection closes (HTTP/1.0 streams)
};

// Reason phrase for `status` ("Unknown" for codes not listed).
std::string_view reason_phrase(int status);

// Status line, the caller's headers (minus Content-Length, Transfer-Encoding and Connection,
// which are set here; CR/LF in names or values are dropped), the framing header and
// "Connection: close" when `close`, or "Connection: keep-alive" when `keep_alive_header`.
std::string format_head(int status, const Headers& headers, BodyFraming framing, size_t content_length, bool close,
                        bool keep_alive_header = false);

// One chunk of a chunked body: hex size, CRLF, data, CRLF. `data` must not be empty.
std::string frame_chunk(std::string_view data);

// The zero-length chunk that ends a chunked body.
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";

// The interim response to "Expect: 100-continue".
inline constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// A complete protocol-error response (application/json body, closes the connection;
// a 503 says Retry-After: 1).
std::string format_error_response(int status, const std::string& json_body);

}  // namespace db::http

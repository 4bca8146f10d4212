// One parsed HTTP/1.1 request, as handed to a Handler: the head and the whole body
// (chunked transfer already decoded). Plain data; no I/O.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace db::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;    // "GET", "POST", ... as sent
  std::string target;    // path and query as sent, e.g. "/v1/files/abc?limit=2"
  std::string path;      // target up to '?', not percent-decoded
  std::string query;     // target after '?' ("" when none)
  Headers headers;       // names lower-cased, values trimmed, in arrival order
  std::string body;      // the whole body, at most ServerOptions::max_body_bytes
  std::string remote;    // peer address "ip:port" (for logs)

  // First value of the header `lower_name` (lower-case), or nullptr.
  const std::string* header(std::string_view lower_name) const;
};

}  // namespace db::http

// One parsed HTTP/1.1 request, as handed to a Handler: the head and the whole body
// (chunked transfer already decoded). Plain data and the body's share of the server's
// body budget; no I/O. Move-only.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <memory>

#include "http/body_budget.h"
#include "http/body_spool.h"

namespace db::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;    // "GET", "POST", ... as sent
  std::string target;    // the request-target as sent, e.g. "/v1/files/abc?limit=2"
  std::string path;      // the normalized path (request_target.h): what routing and auth see
  std::string query;     // target after '?' ("" when none), not decoded
  Headers headers;       // names lower-cased, values trimmed, in arrival order
  std::string body;      // the whole body, at most ServerOptions::max_body_bytes (empty when spooled)
  std::shared_ptr<SpooledBody> body_file;  // the body on disk, when ServerOptions::spool wanted it
  std::string remote;    // peer address "ip:port" (for logs)
  BodyLease body_lease;  // the body's bytes in the server's BodyBudget; move it along with the body
  std::string principal; // who the router's guard authenticated the request as ("" = nobody in particular);
                         // set by the server, never taken from the request

  // First value of the header `lower_name` (lower-case), or nullptr.
  const std::string* header(std::string_view lower_name) const;
};

}  // namespace db::http

#include "server/auth.h"

#include <algorithm>

#include "server/http_helpers.h"
#include "util/ascii.h"

namespace db::server {

namespace {

// Compares without an early exit, so that timing does not reveal a matching prefix.
bool equal_constant_time(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

std::optional<api::ApiError> check_api_key(const http::Request& req, const std::string& api_key) {
  if (api_key.empty()) return std::nullopt;
  const std::string* auth = find_header(req.headers, "authorization");
  if (!auth)
    return api::ApiError("missing API key: send 'Authorization: Bearer <key>'", "", "invalid_api_key", 401,
                         "authentication_error");
  std::string_view value = *auth;
  if (!starts_with_nocase(value, "Bearer ")) {
    return api::ApiError("the Authorization header must be 'Bearer <key>'", "", "invalid_api_key", 401,
                         "authentication_error");
  }
  value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (!equal_constant_time(value, api_key))
    return api::ApiError("incorrect API key provided", "", "invalid_api_key", 401, "authentication_error");
  return std::nullopt;
}

}  // namespace db::server

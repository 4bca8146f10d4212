#include "server/auth.h"

#include "server/http_helpers.h"
#include "util/ascii.h"

namespace db::server {

namespace {

api::ApiError unauthorized(const char* message) {
  return api::ApiError(message, "", "invalid_api_key", 401, "authentication_error");
}

// The token of `Authorization: Bearer <token>`; throws 401 when the header is missing or of another scheme.
std::string_view bearer_token(const http::Request& req) {
  const std::string* auth = find_header(req.headers, "authorization");
  if (!auth) throw unauthorized("missing API key: send 'Authorization: Bearer <key>'");
  std::string_view value = *auth;
  if (!starts_with_nocase(value, "Bearer ")) throw unauthorized("the Authorization header must be 'Bearer <key>'");
  value.remove_prefix(7);
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return value;
}

}  // namespace

const Tenant* authenticate(const http::Request& req, const TenantRegistry& tenants) {
  if (tenants.open()) return nullptr;
  const Tenant* tenant = tenants.find_by_key(bearer_token(req));
  if (!tenant) throw unauthorized("incorrect API key provided");
  return tenant;
}

std::optional<api::ApiError> check_api_key(const http::Request& req, const std::string& api_key) {
  try {
    authenticate(req, TenantRegistry::single_key(api_key));
  } catch (const api::ApiError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace db::server

// API-key check: with keys configured, a request needs `Authorization: Bearer <key>`,
// and the key says which tenant it comes from (tenant_registry.h).
// Which routes need it is the route table's business (http::Access): the app installs
// this check as the router's guard, and /health and /metrics are added as open routes.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "http/request.h"
#include "server/tenant_registry.h"

namespace db::server {

// The tenant `req` comes from: nullptr when the registry is open (no keys), the
// tenant whose key it carries otherwise. Throws api::ApiError 401 for a missing,
// malformed or unknown key (the message never quotes the key).
const Tenant* authenticate(const http::Request& req, const TenantRegistry& tenants);

// nullopt when `req` may pass (no key configured, or the right bearer token);
// otherwise the 401 error to answer with. The one-key form of authenticate().
std::optional<api::ApiError> check_api_key(const http::Request& req, const std::string& api_key);

}  // namespace db::server

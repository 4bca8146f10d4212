// API-key check: with a key configured, a request needs `Authorization: Bearer <key>`.
// Which routes need it is the route table's business (http::Access): the app installs
// this check as the router's guard, and /health and /metrics are added as open routes.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "http/request.h"

namespace db::server {

// nullopt when `req` may pass (no key configured, or the right bearer token);
// otherwise the 401 error to answer with.
std::optional<api::ApiError> check_api_key(const http::Request& req, const std::string& api_key);

}  // namespace db::server

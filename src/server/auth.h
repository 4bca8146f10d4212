// API-key check: with a key configured, /v1/* requests need `Authorization: Bearer <key>`.
// /health and /metrics stay open so that probes and scrapers need no secret.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "http/request.h"

namespace db::server {

// True when `path` needs the API key (everything under /v1/).
bool path_requires_key(std::string_view path);
// nullopt when `req` may pass (no key configured, an open path, or the right bearer token);
// otherwise the 401 error to answer with.
std::optional<api::ApiError> check_api_key(const http::Request& req, const std::string& api_key);

}  // namespace db::server

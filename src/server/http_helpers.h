// Small helpers shared by the server's handlers: header lookup, JSON and
// OpenAI-error responses.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "http/request.h"
#include "http/responder.h"

namespace db::server {

inline constexpr const char* kJsonContentType = "application/json";

// First value of header `lower_name` in `headers` (names are lower-case), or nullptr.
const std::string* find_header(const http::Headers& headers, std::string_view lower_name);

// 200-style JSON response.
void send_json(http::Responder& res, int status, const nlohmann::ordered_json& body, http::Headers extra = {});
// An OpenAI error response with e.status() and, for 429 / 503, Retry-After (a
// QuotaExceeded's own, else 1 s).
void send_error(http::Responder& res, const api::ApiError& e);

// 503 for a process that can no longer serve (util/unrecoverable.h): `reason` says why.
api::ApiError model_unavailable_error(const std::string& reason);

// The OpenAI error type for an HTTP status: "invalid_request_error" (4xx), "server_error" (5xx), ...
const char* error_type_for_status(int status);
// The error body of the transport (protocol errors, 404/405): OpenAI's error JSON as text.
std::string protocol_error_body(int status, const std::string& message);

}  // namespace db::server

#include "server/http_helpers.h"

#include "api/stream_chunk.h"
#include "server/quota_error.h"

namespace db::server {

const std::string* find_header(const http::Headers& headers, std::string_view lower_name) {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return &value;
  return nullptr;
}

void send_json(http::Responder& res, int status, const nlohmann::ordered_json& body, http::Headers extra) {
  extra.emplace_back("Content-Type", kJsonContentType);
  res.send(status, std::move(extra), api::dump_json(body));
}

void send_error(http::Responder& res, const api::ApiError& e) {
  http::Headers extra;
  if (const auto* quota = dynamic_cast<const QuotaExceeded*>(&e))
    extra.emplace_back("Retry-After", std::to_string(quota->retry_after_s()));
  else if (e.status() == 429 || e.status() == 503)
    extra.emplace_back("Retry-After", "1");
  send_json(res, e.status(), api::error_body(e), std::move(extra));
}

const char* error_type_for_status(int status) {
  if (status == 401) return "authentication_error";
  if (status == 404) return "not_found_error";
  if (status == 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

std::string protocol_error_body(int status, const std::string& message) {
  return api::dump_json(api::error_body(api::ApiError(message, "", "", status, error_type_for_status(status))));
}

api::ApiError model_unavailable_error(const std::string& reason) {
  return api::ApiError("the model is unavailable: " + reason, "", "model_unavailable", 503, "server_error");
}

}  // namespace db::server

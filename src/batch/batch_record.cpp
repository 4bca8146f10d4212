#include "batch/batch_record.h"

#include "api/response.h"

namespace db::batch {

namespace {

using OJson = nlohmann::ordered_json;

std::string dump_line(const OJson& record) {
  return record.dump(-1, ' ', /*ensure_ascii=*/false, OJson::error_handler_t::replace);
}

OJson record_head(const std::optional<std::string>& custom_id) {
  OJson r;
  r["id"] = api::new_response_id("batch_req_");
  r["custom_id"] = custom_id ? OJson(*custom_id) : OJson(nullptr);
  return r;
}

}  // namespace

std::string success_record(const std::string& custom_id, const OJson& body) {
  OJson r = record_head(custom_id);
  OJson response;
  response["status_code"] = 200;
  response["request_id"] = api::new_response_id("req_");
  response["body"] = body;
  r["response"] = std::move(response);
  r["error"] = nullptr;
  return dump_line(r);
}

std::string error_record(const std::optional<std::string>& custom_id, const std::string& code,
                         const std::string& message) {
  OJson r = record_head(custom_id);
  r["response"] = nullptr;
  OJson err;
  err["code"] = code;
  err["message"] = message;
  r["error"] = std::move(err);
  return dump_line(r);
}

}  // namespace db::batch

#include "api/api_error.h"

namespace db::api {

[[noreturn]] void invalid_param(const std::string& message, const std::string& param, const char* code) {
  throw ApiError(message, param, code);
}

ApiError::ApiError(std::string message, std::string param, std::string code, int status, std::string type)
    : Error(std::move(message)),
      param_(std::move(param)),
      code_(std::move(code)),
      type_(std::move(type)),
      status_(status) {}

namespace {

nlohmann::ordered_json null_if_empty(const std::string& s) {
  return s.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(s);
}

}  // namespace

nlohmann::ordered_json error_body(const ApiError& e) {
  nlohmann::ordered_json err;
  err["message"] = e.what();
  err["type"] = e.type();
  err["param"] = null_if_empty(e.param());
  err["code"] = null_if_empty(e.code());
  return {{"error", std::move(err)}};
}

nlohmann::ordered_json error_body(const std::string& message, const std::string& type) {
  nlohmann::ordered_json err;
  err["message"] = message;
  err["type"] = type;
  err["param"] = nullptr;
  err["code"] = nullptr;
  return {{"error", std::move(err)}};
}

}  // namespace db::api

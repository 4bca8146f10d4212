// Errors of the OpenAI-compatible protocol: what the client got wrong (or what
// cannot be served), carried as an exception and rendered as OpenAI's error JSON
//   {"error": {"message": ..., "type": "invalid_request_error", "param": ..., "code": ...}}
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "util/error.h"

namespace db::api {

class ApiError : public Error {
 public:
  // `param`: the offending request field ("" when none); `code`: a short machine
  // code ("" for null); `status`: the HTTP status this error maps to.
  ApiError(std::string message, std::string param = "", std::string code = "", int status = 400,
           std::string type = "invalid_request_error");

  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  const std::string& type() const { return type_; }
  int status() const { return status_; }

 private:
  std::string param_, code_, type_;
  int status_;
};

// Throws the 400 of a request field that fails validation.
[[noreturn]] void invalid_param(const std::string& message, const std::string& param,
                                const char* code = "invalid_value");

// {"error": {"message", "type", "param", "code"}}; empty param / code become null.
nlohmann::ordered_json error_body(const ApiError& e);
// The same shape for any other failure (e.g. the engine's), with param and code null.
nlohmann::ordered_json error_body(const std::string& message, const std::string& type = "server_error");

}  // namespace db::api

// A request refused because its tenant is over a quota: 429 rate_limit_exceeded, with
// the Retry-After (seconds) that send_error() puts in the response.
#pragma once
#include <string>

#include "api/api_error.h"

namespace db::server {

class QuotaExceeded : public api::ApiError {
 public:
  QuotaExceeded(std::string message, int retry_after_s)
      : api::ApiError(std::move(message), "", "rate_limit_exceeded", 429, "rate_limit_error"),
        retry_after_s_(retry_after_s) {}
  int retry_after_s() const { return retry_after_s_; }

 private:
  int retry_after_s_;
};

}  // namespace db::server

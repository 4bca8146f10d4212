#include "api/timeout_error.h"

#include <cstdio>

namespace db::api {

std::string format_seconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", seconds);
  return buf;
}

std::optional<ApiError> timeout_error(const GenerationResult& result, double timeout_seconds) {
  for (const ChoiceOutput& c : result.choices()) {
    if (c.finish == FinishReason::Timeout) {
      const std::string deadline =
          timeout_seconds > 0 ? "the request's deadline of " + format_seconds(timeout_seconds) + " s ('timeout') passed"
                              : "the request's deadline passed";
      return ApiError(deadline + " before it finished", "timeout", "request_timeout", 408, "timeout_error");
    }
    if (c.finish == FinishReason::QueueTimeout) {
      const std::string why = c.stop_reason.empty() ? "" : " (" + c.stop_reason + ")";
      return ApiError("the request waited in the queue longer than this server allows" + why + "; retry later", "",
                      "queue_timeout", 503, "server_error");
    }
  }
  return std::nullopt;
}

}  // namespace db::api

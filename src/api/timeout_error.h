// The OpenAI-style error a request gets when the engine ended it for time rather
// than finishing it: its own deadline ("timeout" in the body) passed, or it waited
// in the queue past the server's limit. Outputs produced so far are not returned.
//   FinishReason::Timeout      -> 408, type "timeout_error", code "request_timeout"
//   FinishReason::QueueTimeout -> 503, type "server_error",  code "queue_timeout" (the
//                                 HTTP layer adds Retry-After to every 503)
#pragma once
#include <optional>

#include "api/api_error.h"
#include "api/generation_result.h"

namespace db::api {

// The error for the first choice of `result` that ended by Timeout or QueueTimeout;
// nullopt when none did. `timeout_seconds` is the deadline the request asked for
// (named in the message; 0 when it came from elsewhere, e.g. a batch's window).
std::optional<ApiError> timeout_error(const GenerationResult& result, double timeout_seconds);

// "0.05", "30", "1.5": seconds as a short decimal for messages.
std::string format_seconds(double seconds);

}  // namespace db::api

// Lines of the batch output file, in the OpenAI batch output format:
//   {"id": "batch_req_...", "custom_id": "...",
//    "response": {"status_code": 200, "request_id": "...", "body": {...}} | null,
//    "error": null | {"code": "...", "message": "..."}}
// Each line is one complete JSON object without the trailing newline; text that
// is not valid UTF-8 is written with U+FFFD in its place.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace db::batch {

// The error code of the records of requests left unfinished when their batch's
// completion window ended (BatchJobOptions::deadline).
inline constexpr const char* kBatchExpiredCode = "batch_expired";

// A successful request: `body` is the completion / chat.completion response body.
std::string success_record(const std::string& custom_id, const nlohmann::ordered_json& body);
// A failed request or a bad line; custom_id null when the line had none.
std::string error_record(const std::optional<std::string>& custom_id, const std::string& code,
                         const std::string& message);

}  // namespace db::batch

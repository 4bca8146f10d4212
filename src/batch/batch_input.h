// The input of a batch job: one OpenAI Batch API request per line,
//   {"custom_id": "...", "method": "POST", "url": "/v1/completions" | "/v1/chat/completions", "body": {...}}
// Every line becomes either a runnable item or an error that gets its own record.
// Blank lines are skipped.
#pragma once
#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/openai_request.h"

namespace db::batch {

struct BatchItem {
  size_t line_no = 0;        // 1-based line in the input file
  std::string custom_id;     // unique within the file
  api::Endpoint endpoint;    // from "url"
  api::ApiRequest request;   // the parsed, validated body
};

// Codes of errors that concern the line itself rather than a custom_id's request:
// the records for them are matched by (code, custom_id) counts when resuming.
inline constexpr const char* kInvalidJson = "invalid_json";
inline constexpr const char* kMissingCustomId = "missing_custom_id";
inline constexpr const char* kDuplicateCustomId = "duplicate_custom_id";
// True for the codes above.
bool is_line_level_code(std::string_view code);

struct LineError {
  size_t line_no = 0;                     // 1-based line in the input file
  std::optional<std::string> custom_id;   // the line's custom_id when it has a usable one
  std::string code;                       // invalid_json, missing_custom_id, duplicate_custom_id, invalid_method,
                                          // invalid_url, or the body's error code (invalid_type, invalid_value, ...)
  std::string message;                    // "line N: ..." naming the problem (and the param for body errors)
};

struct BatchInput {
  std::vector<BatchItem> items;    // runnable requests, in file order
  std::vector<LineError> errors;   // bad lines, in file order
  size_t lines = 0;                // non-blank lines read
};

// Parses every line of `in`. Never throws for bad lines.
BatchInput parse_batch_input(std::istream& in);

// A line of an input file with its 1-based number there (a part of a file run
// elsewhere, as deepbatch.ray's actors do, keeps the file's line numbers).
struct NumberedLine {
  size_t line_no = 0;
  std::string text;
};
// parse_batch_input over lines taken from a file, in file order.
BatchInput parse_numbered_lines(const std::vector<NumberedLine>& lines);
// Reads the file at `path`; throws db::Error when it cannot be opened.
BatchInput read_batch_input(const std::string& path);

}  // namespace db::batch

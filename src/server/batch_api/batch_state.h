// One batch of the batch API as plain data, its lifecycle and its JSON forms.
//
//   validating --> in_progress --> finalizing --> completed
//       |              |              \--> expired (its completion window ended first)
//       |              |    \--> failed
//       |              \--> cancelling --> cancelled
//       \--> cancelled (cancelled before it started)   \--> failed (input unusable)
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace db::server {

enum class BatchStatus { Validating, InProgress, Finalizing, Completed, Failed, Cancelling, Cancelled, Expired };

const char* batch_status_name(BatchStatus s);  // "validating", "in_progress", ...
// Throws db::Error for an unknown name.
BatchStatus batch_status_from_name(const std::string& name);
// Completed, Failed, Cancelled, Expired: nothing more happens to the batch.
bool is_terminal(BatchStatus s);
// Whether the lifecycle above allows `from` -> `to`.
bool can_transition(BatchStatus from, BatchStatus to);

struct RequestCounts {
  int64_t total = 0;      // requests in the input file
  int64_t completed = 0;  // answered successfully
  int64_t failed = 0;     // ended with an error record
};

// Tokens of the requests in the output file (OpenAI's batch "usage"). The records do
// not say how much of a prompt the prefix cache served, so cached_tokens stays 0.
struct BatchUsage {
  int64_t input_tokens = 0;   // prompt tokens
  int64_t output_tokens = 0;  // generated tokens
};

struct BatchRecord {
  std::string id;                          // "batch_<24 hex>"
  std::string endpoint;                    // "/v1/completions" or "/v1/chat/completions"
  std::string input_file_id;
  std::string completion_window = "24h";   // see completion_window.h; expires_at = created_at + window
  BatchStatus status = BatchStatus::Validating;
  std::optional<std::string> output_file_id, error_file_id;  // set when finalized (none when empty)
  std::string reserved_output_file_id, reserved_error_file_id;  // ids chosen before finalizing (crash-safe retry)
  int64_t created_at = 0;                  // Unix seconds; the *_at below are 0 until they happen
  int64_t in_progress_at = 0, finalizing_at = 0, completed_at = 0, failed_at = 0, cancelling_at = 0,
          cancelled_at = 0, expired_at = 0;
  RequestCounts counts;
  std::optional<BatchUsage> usage;         // set when finalized (null in the JSON until then)
  nlohmann::json metadata;                 // object or null, as given
  std::string error_code, error_message;   // why the batch failed ("" unless failed)
  uint64_t seq = 0;                        // creation order (ties of created_at)
  std::string owner;                       // the tenant that created it ("" = the default tenant)
};

// Moves `b` to `to`, stamping the matching *_at with `now`. Throws db::Error when
// the lifecycle does not allow it.
void transition(BatchRecord& b, BatchStatus to, int64_t now);

// created_at + the completion window (24h when the stored window is unreadable).
int64_t expires_at(const BatchRecord& b);

// The OpenAI batch object.
nlohmann::ordered_json batch_json(const BatchRecord& b);
// The stored form (the OpenAI object plus internal fields) and back; from_stored
// throws db::Error naming the missing or bad field.
std::string batch_to_stored(const BatchRecord& b);
BatchRecord batch_from_stored(const std::string& text);

}  // namespace db::server

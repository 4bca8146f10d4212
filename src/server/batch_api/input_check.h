// The check a batch's input file gets before the batch is created: every line a
// request of the batch's endpoint, so that a file that is not a batch file is
// refused at once (400) instead of becoming a batch of error records. Request
// bodies are checked later, per request, by the job (bad ones get error records).
#pragma once
#include <cstddef>
#include <string>

namespace db::server {

// Most requests one batch may hold.
inline constexpr size_t kMaxBatchRequests = 50000;

// Requests (non-blank lines) in the file at `path`. Throws api::ApiError (400,
// param input_file_id) naming the first line that is not JSON, not an object, has
// no string custom_id or a repeated one, a method other than POST, a url other than
// `endpoint`, or no object body; or when there is no request or too many.
size_t check_batch_input(const std::string& path, const std::string& endpoint);

}  // namespace db::server

// A process-wide note that the process can no longer do its work (e.g. the other
// ranks of a split model are gone) and is about to end: set once by whoever finds
// out, read by whoever answers for the process (the server's /health and its
// requests answer 503 with the reason instead of hanging or blaming the request).
#pragma once
#include <optional>
#include <string>

namespace db {

// Records `reason` (the first one wins; later calls are ignored). Thread-safe.
void mark_unrecoverable(const std::string& reason);

// The recorded reason, or nullopt while the process is healthy. Thread-safe.
std::optional<std::string> unrecoverable_reason();

}  // namespace db

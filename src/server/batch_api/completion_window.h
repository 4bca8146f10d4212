// A batch's "completion_window": how long it may take, counted from its creation;
// when it ends the batch expires (see batch_runner.h). OpenAI accepts only "24h";
// this server also takes a whole number of seconds, minutes or hours ("30s", "10m",
// "24h"), from kMinCompletionWindowSeconds to kMaxCompletionWindowSeconds (an extension).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace db::server {

inline constexpr int64_t kMinCompletionWindowSeconds = 1;
inline constexpr int64_t kMaxCompletionWindowSeconds = 7 * 24 * 3600;  // a week
inline constexpr int64_t kDefaultCompletionWindowSeconds = 24 * 3600;

// The window's length in seconds; nullopt when `window` is not <digits><s|m|h> or is
// out of range.
std::optional<int64_t> completion_window_seconds(std::string_view window);

}  // namespace db::server

#include "server/batch_api/completion_window.h"

namespace db::server {

std::optional<int64_t> completion_window_seconds(std::string_view window) {
  if (window.size() < 2 || window.size() > 12) return std::nullopt;  // 10 digits and a unit are plenty
  int64_t unit = 0;
  switch (window.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    default: return std::nullopt;
  }
  int64_t count = 0;
  for (char c : window.substr(0, window.size() - 1)) {
    if (c < '0' || c > '9') return std::nullopt;
    count = count * 10 + (c - '0');
  }
  const int64_t seconds = count * unit;
  if (seconds < kMinCompletionWindowSeconds || seconds > kMaxCompletionWindowSeconds) return std::nullopt;
  return seconds;
}

}  // namespace db::server

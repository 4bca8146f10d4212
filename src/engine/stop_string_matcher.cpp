#include "engine/stop_string_matcher.h"

#include <algorithm>

namespace db {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

StopStringMatcher::Result StopStringMatcher::push(std::string_view text) {
  Result r;
  if (matched_) return r;
  std::string buf = held_;
  buf.append(text);
  held_.clear();
  size_t best_pos = std::string::npos;
  for (size_t i = 0; i < stops_.size(); ++i) {
    const size_t pos = buf.find(stops_[i]);
    if (pos < best_pos) {
      best_pos = pos;
      r.matched = i;
    }
  }
  if (r.matched) {
    matched_ = true;
    r.text = buf.substr(0, best_pos);
    return r;
  }
  // Hold back the longest tail that is a proper prefix of a stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    for (size_t k = std::min(buf.size(), s.size() - 1); k > hold; --k) {
      if (std::string_view(buf).substr(buf.size() - k) == std::string_view(s).substr(0, k)) {
        hold = k;
        break;
      }
    }
  }
  held_ = buf.substr(buf.size() - hold);
  r.text = buf.substr(0, buf.size() - hold);
  return r;
}

std::string StopStringMatcher::flush() {
  std::string out;
  out.swap(held_);
  return matched_ ? std::string() : out;
}

}  // namespace db

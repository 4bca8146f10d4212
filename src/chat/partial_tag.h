// Streamed text is scanned for tags that may arrive split across pieces: the end
// of what came so far is held back while it may still be the start of a tag.
#pragma once
#include <algorithm>
#include <string_view>

namespace db::chat {

// Length of the longest suffix of `s` that is a proper prefix of `tag`.
inline size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.empty() ? 0 : tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

}  // namespace db::chat

// ASCII case folding for protocol tokens (header names and values, URL schemes,
// auth schemes): bytes outside A-Z are left as they are, whatever the locale.
#pragma once
#include <string>
#include <string_view>

namespace db {

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

// True when `s` starts with `prefix`, ignoring ASCII case.
inline bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (ascii_lower(s[i]) != ascii_lower(prefix[i])) return false;
  return true;
}

}  // namespace db

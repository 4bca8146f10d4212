#include "chat/text.h"

#include <algorithm>

#include "util/utf8_encode.h"

namespace db::chat::text {

std::u32string decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int extra = 0;
    char32_t cp = 0;
    if (b0 < 0x80) {
      cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      cp = b0 & 0x1F;
      extra = 1;
    } else if ((b0 & 0xF0) == 0xE0) {
      cp = b0 & 0x0F;
      extra = 2;
    } else if ((b0 & 0xF8) == 0xF0) {
      cp = b0 & 0x07;
      extra = 3;
    } else {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    bool ok = true;
    for (int k = 1; k <= extra; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
        ok = false;
        break;
      }
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    if (!ok) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += extra + 1;
  }
  return out;
}

void append(std::string& out, char32_t cp) { append_utf8(out, static_cast<uint32_t>(cp)); }

std::string encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) append(out, c);
  return out;
}

size_t length(std::string_view s) {
  size_t n = 0;
  for (char ch : s) {
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
  }
  return n;
}

bool is_space(char32_t c) {
  if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) return true;
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_printable(char32_t c) {
  if (c == ' ') return true;
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0)) return false;
  if (c == 0xAD) return false;
  if (is_space(c)) return false;
  if ((c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x180E) return false;
  if ((c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F)) return false;
  if (c >= 0xD800 && c <= 0xF8FF) return false;  // surrogates and private use
  if (c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || c == 0xFFFE || c == 0xFFFF) return false;
  if (c >= 0xF0000) return false;  // supplementary private use
  if (c > 0x10FFFF) return false;
  return true;
}

namespace {

// Pairs where upper and lower differ by one and the upper is even (Latin
// Extended-A, Cyrillic supplement pairs, ...).
bool in_alternating_block(char32_t c) {
  return (c >= 0x100 && c <= 0x12F) || (c >= 0x132 && c <= 0x137) || (c >= 0x14A && c <= 0x177) ||
         (c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F) ||
         (c >= 0x1E00 && c <= 0x1E95) || (c >= 0x1EA0 && c <= 0x1EFF);
}

// Pairs where the upper is odd (Latin Extended-A 0x139-0x148, 0x179-0x17E).
bool in_odd_upper_block(char32_t c) {
  return (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E) || (c >= 0x4C1 && c <= 0x4CE);
}

}  // namespace

bool is_upper(char32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  if (c >= 0xC0 && c <= 0xDE) return c != 0xD7;
  if (in_alternating_block(c)) return c % 2 == 0;
  if (in_odd_upper_block(c)) return c % 2 == 1;
  if (c == 0x178) return true;
  if (c >= 0x391 && c <= 0x3AB) return c != 0x3A2;
  if (c == 0x386 || (c >= 0x388 && c <= 0x38F && c != 0x38B && c != 0x38D)) return true;
  if (c >= 0x400 && c <= 0x42F) return true;
  return false;
}

bool is_lower(char32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  if (c == 0xB5 || c == 0xDF) return true;
  if (c >= 0xDF && c <= 0xFF) return c != 0xF7;
  if (in_alternating_block(c)) return c % 2 == 1;
  if (in_odd_upper_block(c)) return c % 2 == 0;
  if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return true;
  if (c >= 0x3AC && c <= 0x3CE) return true;
  if (c >= 0x430 && c <= 0x45F) return true;
  return false;
}

bool is_alpha(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  if (is_upper(c) || is_lower(c)) return true;
  if (c == 0xAA || c == 0xBA) return true;
  // Letters without case in common scripts (CJK, kana, hangul, Arabic, Hebrew...).
  return (c >= 0x5D0 && c <= 0x5EA) || (c >= 0x620 && c <= 0x64A) || (c >= 0x3041 && c <= 0x3096) ||
         (c >= 0x30A1 && c <= 0x30FA) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3) ||
         (c >= 0x3400 && c <= 0x4DBF);
}

char32_t to_upper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if (c == 0xB5) return 0x39C;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0x131) return 'I';
  if (c == 0x17F) return 'S';
  if (in_alternating_block(c) && c % 2 == 1) return c - 1;
  if (in_odd_upper_block(c) && c % 2 == 0) return c - 1;
  if (c >= 0x3B1 && c <= 0x3CB) return c == 0x3C2 ? 0x3A3 : c - 32;
  if (c == 0x3AC) return 0x386;
  if (c >= 0x3AD && c <= 0x3AF) return c - 37;
  if (c == 0x3CC) return 0x38C;
  if (c == 0x3CD || c == 0x3CE) return c - 63;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

char32_t to_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c == 0x130) return 'i';  // simple mapping; Python yields "i̇"
  if (in_alternating_block(c) && c % 2 == 0) return c + 1;
  if (in_odd_upper_block(c) && c % 2 == 1) return c + 1;
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

namespace {

template <typename F>
std::string map_chars(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : decode(s)) {
    const std::u32string mapped = f(c);
    for (char32_t m : mapped) append(out, m);
  }
  return out;
}

std::u32string upper_full(char32_t c) {
  if (c == 0xDF) return U"SS";
  return std::u32string(1, to_upper(c));
}

bool is_cased(char32_t c) { return is_upper(c) || is_lower(c); }

}  // namespace

std::string upper(std::string_view s) { return map_chars(s, upper_full); }

std::string lower(std::string_view s) {
  return map_chars(s, [](char32_t c) { return std::u32string(1, to_lower(c)); });
}

std::string swapcase(std::string_view s) {
  return map_chars(s, [](char32_t c) {
    if (is_upper(c)) return std::u32string(1, to_lower(c));
    if (is_lower(c)) return upper_full(c);
    return std::u32string(1, c);
  });
}

std::string capitalize(std::string_view s) {
  std::string out;
  bool first = true;
  for (char32_t c : decode(s)) {
    if (first) {
      for (char32_t m : upper_full(c)) append(out, m);
      first = false;
    } else {
      append(out, to_lower(c));
    }
  }
  return out;
}

std::string title_method(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (char32_t c : decode(s)) {
    if (is_cased(c)) {
      if (prev_cased) {
        append(out, to_lower(c));
      } else {
        for (char32_t m : upper_full(c)) append(out, m);
      }
      prev_cased = true;
    } else {
      append(out, c);
      prev_cased = false;
    }
  }
  return out;
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right) {
  const std::u32string cps = decode(s);
  const std::u32string set = chars ? decode(*chars) : std::u32string();
  auto strippable = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_space(c); };
  size_t b = 0, e = cps.size();
  if (left) {
    while (b < e && strippable(cps[b])) ++b;
  }
  if (right) {
    while (e > b && strippable(cps[e - 1])) --e;
  }
  return encode(std::u32string_view(cps).substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      const size_t hit = s.find(*sep, pos);
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  const std::u32string cps = decode(s);
  size_t i = 0;
  const size_t n = cps.size();
  while (true) {
    while (i < n && is_space(cps[i])) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      size_t e = n;
      while (e > i && is_space(cps[e - 1])) --e;
      out.push_back(encode(std::u32string_view(cps).substr(i, e - i)));
      break;
    }
    size_t j = i;
    while (j < n && !is_space(cps[j])) ++j;
    out.push_back(encode(std::u32string_view(cps).substr(i, j - i)));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit) {
  if (maxsplit < 0) return split(s, sep, maxsplit);
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      const size_t hit = s.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    out.emplace_back(s.substr(0, end));
    std::reverse(out.begin(), out.end());
    return out;
  }
  const std::u32string cps = decode(s);
  size_t e = cps.size();
  while (true) {
    while (e > 0 && is_space(cps[e - 1])) --e;
    if (e == 0) break;
    if (static_cast<int64_t>(out.size()) == maxsplit) {
      size_t b = 0;
      while (b < e && is_space(cps[b])) ++b;
      out.push_back(encode(std::u32string_view(cps).substr(b, e - b)));
      break;
    }
    size_t b = e;
    while (b > 0 && !is_space(cps[b - 1])) --b;
    out.push_back(encode(std::u32string_view(cps).substr(b, e - b)));
    e = b;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> splitlines(std::string_view s) {
  const std::u32string cps = decode(s);
  std::vector<std::string> out;
  size_t start = 0, i = 0;
  auto is_break = [](char32_t c) {
    return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 ||
           c == 0x2028 || c == 0x2029;
  };
  while (i < cps.size()) {
    if (is_break(cps[i])) {
      out.push_back(encode(std::u32string_view(cps).substr(start, i - start)));
      if (cps[i] == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
      start = i + 1;
    }
    ++i;
  }
  if (start < cps.size()) out.push_back(encode(std::u32string_view(cps).substr(start)));
  return out;
}

std::string replace(std::string_view s, std::string_view old_s, std::string_view new_s, int64_t count) {
  std::string out;
  if (old_s.empty()) {
    const std::u32string cps = decode(s);
    int64_t done = 0;
    for (char32_t c : cps) {
      if (count < 0 || done < count) {
        out.append(new_s);
        ++done;
      }
      append(out, c);
    }
    if (count < 0 || done < count) out.append(new_s);
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t hit = s.find(old_s, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(new_s);
    pos = hit + old_s.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

int64_t find(std::string_view s, std::string_view sub, bool reverse) {
  const size_t hit = reverse ? s.rfind(sub) : s.find(sub);
  if (hit == std::string_view::npos) return -1;
  return static_cast<int64_t>(length(s.substr(0, hit)));
}

int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(length(s)) + 1;
  int64_t n = 0;
  size_t pos = 0;
  while (true) {
    const size_t hit = s.find(sub, pos);
    if (hit == std::string_view::npos) break;
    ++n;
    pos = hit + sub.size();
  }
  return n;
}

}  // namespace db::chat::text

#include "tokenizer/utf8.h"

#include "util/utf8_encode.h"

namespace db::utf8 {

namespace {

// Number of bytes the lead byte announces (0 for bytes that cannot start a sequence).
size_t announced_length(uint8_t b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

// Allowed range of the second byte for a given lead byte (Unicode Table 3-7).
void second_byte_range(uint8_t lead, uint8_t& lo, uint8_t& hi) {
  lo = 0x80;
  hi = 0xBF;
  if (lead == 0xE0) lo = 0xA0;
  else if (lead == 0xED) hi = 0x9F;
  else if (lead == 0xF0) lo = 0x90;
  else if (lead == 0xF4) hi = 0x8F;
}

// How many bytes from `pos` form a valid (possibly incomplete) prefix of a sequence.
size_t valid_prefix_bytes(std::string_view s, size_t pos, size_t& need) {
  const auto lead = static_cast<uint8_t>(s[pos]);
  need = announced_length(lead);
  if (need == 0) return 0;
  if (need == 1) return 1;
  size_t k = 1;
  while (k < need && pos + k < s.size()) {
    const auto b = static_cast<uint8_t>(s[pos + k]);
    uint8_t lo = 0x80, hi = 0xBF;
    if (k == 1) second_byte_range(lead, lo, hi);
    if (b < lo || b > hi) break;
    ++k;
  }
  return k;
}

}  // namespace

size_t valid_sequence_length(std::string_view s, size_t pos) {
  if (pos >= s.size()) return 0;
  size_t need = 0;
  const size_t got = valid_prefix_bytes(s, pos, need);
  return (need != 0 && got == need) ? need : 0;
}

size_t decode(std::string_view s, size_t pos, uint32_t& cp) {
  const size_t n = valid_sequence_length(s, pos);
  if (n == 0) return 0;
  const auto b0 = static_cast<uint8_t>(s[pos]);
  if (n == 1) {
    cp = b0;
    return 1;
  }
  cp = b0 & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[pos + k]) & 0x3F);
  return n;
}

void append(std::string& out, uint32_t cp) { append_utf8(out, cp); }

size_t valid_prefix_length(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t n = valid_sequence_length(s, pos);
    if (n == 0) break;
    pos += n;
  }
  return pos;
}

bool is_valid(std::string_view s) { return valid_prefix_length(s) == s.size(); }

size_t incomplete_tail_length(std::string_view s) {
  // A cut-short character has at most 3 bytes; find its lead byte among the last 3.
  const size_t lookback = s.size() < 3 ? s.size() : 3;
  for (size_t k = 1; k <= lookback; ++k) {
    const size_t pos = s.size() - k;
    const auto b = static_cast<uint8_t>(s[pos]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = 0;
    const size_t got = valid_prefix_bytes(s, pos, need);
    return (need > 1 && got == k && got < need) ? k : 0;
  }
  return 0;
}

std::string repair(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    size_t need = 0;
    const size_t got = valid_prefix_bytes(s, pos, need);
    if (need != 0 && got == need) {
      out.append(s.data() + pos, got);
      pos += got;
    } else {
      out.append("\xEF\xBF\xBD");  // U+FFFD for one maximal ill-formed subpart
      pos += got == 0 ? 1 : got;
    }
  }
  return out;
}

bool is_white_space(uint32_t cp) {
  if (cp >= 0x09 && cp <= 0x0D) return true;
  switch (cp) {
    case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
    case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace db::utf8

#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace db::byte_level {

namespace {

struct Tables {
  std::array<std::string, 256> text;  // byte -> UTF-8 of its character
  std::array<int16_t, 324> byte;      // code point (< 324) -> byte, or -1

  Tables() {
    byte.fill(-1);
    uint32_t next_extra = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const uint32_t cp = printable ? static_cast<uint32_t>(b) : next_extra++;
      utf8::append(text[b], cp);
      byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

const std::string& char_of_byte(uint8_t b) { return tables().text[b]; }

int byte_of_char(uint32_t cp) { return cp < tables().byte.size() ? tables().byte[cp] : -1; }

std::string encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += char_of_byte(static_cast<uint8_t>(c));
  return out;
}

std::optional<std::string> decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    uint32_t cp = 0;
    const size_t n = utf8::decode(text, pos, cp);
    if (n == 0) return std::nullopt;
    const int b = byte_of_char(cp);
    if (b < 0) return std::nullopt;
    out.push_back(static_cast<char>(b));
    pos += n;
  }
  return out;
}

}  // namespace db::byte_level

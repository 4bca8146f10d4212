// The GPT-2 byte <-> character mapping of byte-level BPE: every byte value is
// shown as one printable character (bytes that are printable Latin-1 keep their
// code point; the others take code points 256 upward, in byte order).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace db::byte_level {

// UTF-8 text of the character that stands for byte `b`.
const std::string& char_of_byte(uint8_t b);

// The byte a code point stands for, or -1 when it stands for none.
int byte_of_char(uint32_t cp);

// `bytes` with every byte replaced by its character (the form vocabularies store).
std::string encode(std::string_view bytes);

// The bytes a byte-level token text stands for; nullopt when some character of
// `text` (or its encoding) is not part of the mapping.
std::optional<std::string> decode(std::string_view text);

}  // namespace db::byte_level

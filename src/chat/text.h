// UTF-8 helpers with Python str semantics (code-point indexing, str.isspace,
// str.upper/lower, str.strip/split/...). Strings are UTF-8 std::string
// throughout; functions that take positions count code points like Python.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace db::chat::text {

// Decodes UTF-8; an invalid byte decodes to U+FFFD.
std::u32string decode(std::string_view s);
std::string encode(std::u32string_view s);
void append(std::string& out, char32_t cp);
size_t length(std::string_view s);  // code points

// Python str.isspace() for one code point (also what `\s` matches in re).
bool is_space(char32_t c);
// Python str.isprintable() for one code point (approximation without the
// unassigned-code-point table: controls, separators other than ' ', format
// characters, surrogates and private use are non-printable).
bool is_printable(char32_t c);

char32_t to_upper(char32_t c);  // simple case mapping (Latin, Greek, Cyrillic)
char32_t to_lower(char32_t c);
bool is_upper(char32_t c);
bool is_lower(char32_t c);
bool is_alpha(char32_t c);  // letters of the scripts to_upper/to_lower cover

std::string upper(std::string_view s);
std::string lower(std::string_view s);
std::string capitalize(std::string_view s);   // str.capitalize()
std::string title_method(std::string_view s); // str.title()
std::string swapcase(std::string_view s);

// str.strip / lstrip / rstrip; chars == nullopt strips whitespace.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit); sep == nullopt splits on runs of whitespace.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
// str.rsplit(sep, maxsplit).
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep, int64_t maxsplit);
// str.splitlines() (without keepends).
std::vector<std::string> splitlines(std::string_view s);
// str.replace(old, new, count); count < 0 replaces all.
std::string replace(std::string_view s, std::string_view old_s, std::string_view new_s, int64_t count);
// str.find / str.rfind: code-point index or -1.
int64_t find(std::string_view s, std::string_view sub, bool reverse);
// str.count(sub).
int64_t count(std::string_view s, std::string_view sub);

}  // namespace db::chat::text

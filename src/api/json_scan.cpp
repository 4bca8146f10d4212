#include "api/json_scan.h"

#include <cstring>
#include <string>

#include "api/api_error.h"

namespace db::api {

namespace {

// The top-level key (raw text between its quotes) as a param; long keys shortened.
std::string param_of(std::string_view key) {
  constexpr size_t kMax = 64;
  return key.size() <= kMax ? std::string(key) : std::string(key.substr(0, kMax)) + "...";
}

std::string where(std::string_view key) { return key.empty() ? "" : " in '" + param_of(key) + "'"; }

[[noreturn]] void too_deep(const BodyLimits& limits, std::string_view key) {
  throw ApiError("the request nests arrays and objects deeper than " + std::to_string(limits.max_depth) + " levels" +
                     where(key),
                 param_of(key), "nesting_too_deep");
}

[[noreturn]] void too_long(const BodyLimits& limits, std::string_view key) {
  std::string why;
  if (limits.context_tokens > 0)
    why = ": the text of a whole context of " + std::to_string(limits.context_tokens) +
          " tokens is shorter, so it cannot fit the model's context";
  throw ApiError("a string" + where(key) + " is longer than " + std::to_string(limits.max_string_bytes) + " bytes" +
                     why,
                 param_of(key), limits.context_tokens > 0 ? "context_length_exceeded" : "string_too_long");
}

// Skips the string whose opening quote is at `i`; returns the index after its closing
// quote (text.size() when unterminated). `decoded` gets its length with each escape
// counted as one byte (a lower bound of the decoded length).
size_t skip_string(std::string_view text, size_t i, size_t& decoded) {
  decoded = 0;
  ++i;
  while (i < text.size()) {
    const char* start = text.data() + i;
    const size_t left = text.size() - i;
    // Plain bytes up to the next quote or backslash count one each.
    const void* q = std::memchr(start, '"', left);
    const size_t to_quote = q ? static_cast<size_t>(static_cast<const char*>(q) - start) : left;
    const void* b = std::memchr(start, '\\', to_quote);
    if (!b) {
      decoded += to_quote;
      return q ? i + to_quote + 1 : text.size();
    }
    const size_t plain = static_cast<size_t>(static_cast<const char*>(b) - start);
    i += plain + 1;  // at the escaped character
    // "\uXXXX" decodes to at most 3 UTF-8 bytes (a surrogate pair, two escapes, to 4);
    // any other escape to one byte.
    const bool unicode = i < text.size() && text[i] == 'u';
    decoded += plain + (unicode ? 3 : 1);
    if (i < text.size()) i += unicode ? 5 : 1;
  }
  return text.size();
}

}  // namespace

void scan_json_bounds(std::string_view text, const BodyLimits& limits) {
  int depth = 0;
  bool top_is_object = false;  // the outermost container is an object
  bool expect_key = false;     // the next string at depth 1 is a key of the outermost object
  std::string_view top_key;    // the key whose value the scan is inside
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      size_t decoded = 0;
      const size_t end = skip_string(text, i, decoded);
      const bool is_key = depth == 1 && expect_key;
      if (is_key) top_key = text.substr(i + 1, end - i - 2 < text.size() ? end - i - 2 : 0);
      if (decoded > limits.max_string_bytes) too_long(limits, is_key ? std::string_view() : top_key);
      expect_key = false;
      i = end;
      continue;
    }
    if (c == '{' || c == '[') {
      if (++depth > limits.max_depth) too_deep(limits, top_key);
      if (depth == 1) {
        top_is_object = c == '{';
        expect_key = top_is_object;
      }
    } else if (c == '}' || c == ']') {
      if (depth > 0) --depth;
    } else if (c == ',' && depth == 1 && top_is_object) {
      expect_key = true;
    }
    ++i;
  }
}

}  // namespace db::api

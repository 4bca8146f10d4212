// Python-compatible text forms of values: str(), repr(), float repr and
// json.dumps (as the chat-template `tojson` filter calls it).
#pragma once
#include <optional>
#include <string>

#include "chat/value.h"

namespace db::chat {

// Python repr(float): shortest round-trip digits, 'e' notation outside [1e-4, 1e16).
std::string float_repr(double d);
// Python str(value); Undefined renders as "".
std::string to_str(const Value& v);
// Python repr(value).
std::string repr(const Value& v);

// Options of json.dumps(x, ensure_ascii, indent, separators, sort_keys).
struct JsonOptions {
  bool ensure_ascii = false;          // escape non-ASCII as \uXXXX
  std::optional<std::string> indent;  // newline + this per level; nullopt = one line
  std::string item_separator = ", ";  // ", " (or "," when indenting)
  std::string key_separator = ": ";   // between key and value
  bool sort_keys = false;             // sort object keys
};
// json.dumps; throws db::Error for values JSON cannot hold (Undefined, callables).
std::string to_json(const Value& v, const JsonOptions& options);

}  // namespace db::chat

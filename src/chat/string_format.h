// Python string formatting used by templates: `fmt % args` and
// `fmt.format(...)`, for the common conversions (s r d i f x o e and
// fill/align/sign/width/precision). Unsupported specs throw db::Error.
#pragma once
#include <string>

#include "chat/value.h"

namespace db::chat {

// Python `fmt % args` (args: a tuple, a dict for %(name)s, or a single value).
std::string percent_format(const std::string& fmt, const Value& args);
// Python `fmt.format(*positional, **keywords)`.
std::string brace_format(const std::string& fmt, const CallArgs& args);

}  // namespace db::chat

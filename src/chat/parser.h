// Parser from tokens to a syntax tree, following jinja2's grammar and
// operator precedence.
#pragma once
#include <string>

#include "chat/ast.h"

namespace db::chat {

// Parses a whole template; throws db::Error "chat template syntax error at
// line L, column C: ..." on invalid syntax or unsupported tags.
Body parse_template(const std::string& source);

}  // namespace db::chat

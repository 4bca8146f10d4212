// Tokenizer for the Jinja template language with the settings chat templates
// are rendered with: trim_blocks=True, lstrip_blocks=True,
// keep_trailing_newline=False and the default delimiters.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace db::chat {

enum class TokenType {
  Data,           // literal template text
  VariableBegin,  // {{
  VariableEnd,    // }}
  BlockBegin,     // {%
  BlockEnd,       // %}
  Name,           // identifier or keyword
  String,         // string literal (text holds the unescaped value)
  Integer,        // integer literal
  Float,          // float literal
  Operator,       // text holds the operator, e.g. "//" or "("
  End,            // end of the template
};

struct SourcePos {
  int line = 1;    // 1-based line in the template
  int column = 1;  // 1-based column (bytes) in that line
};

struct Token {
  TokenType type = TokenType::End;
  std::string text;       // data, name, unescaped string or operator
  int64_t int_value = 0;  // Integer
  double float_value = 0; // Float
  SourcePos pos;          // where the token starts
};

// Splits a template into tokens; throws db::Error with line and column on
// malformed input (unterminated tags, comments or strings, unknown characters).
std::vector<Token> tokenize(const std::string& source);

// Human-readable description of a token for error messages.
std::string describe(const Token& t);

}  // namespace db::chat

// What a request constrains its output to, as the API gave it: a JSON object, a
// JSON schema, a regular expression, a grammar (EBNF, as XGrammar and llama.cpp's
// GBNF write it), or one of a list of strings.
#pragma once
#include <string>
#include <vector>

namespace db {

struct GrammarSpec {
  enum class Kind { JsonObject, JsonSchema, Regex, Ebnf, Choice };
  Kind kind = Kind::JsonObject;
  std::string text;                 // the schema (JSON text), the regex or the grammar; "" for JsonObject
  std::vector<std::string> choices; // Kind::Choice: the strings allowed, at least one

  // "json_object", "json_schema", "regex", "grammar", "choice"
  const char* kind_name() const;
  // A key that names the constraint exactly, for caches.
  std::string cache_key() const;
};

}  // namespace db

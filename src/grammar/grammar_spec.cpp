#include "grammar/grammar_spec.h"

namespace db {

const char* GrammarSpec::kind_name() const {
  switch (kind) {
    case Kind::JsonObject: return "json_object";
    case Kind::JsonSchema: return "json_schema";
    case Kind::Regex: return "regex";
    case Kind::Ebnf: return "grammar";
    case Kind::Choice: return "choice";
  }
  return "json_object";
}

std::string GrammarSpec::cache_key() const {
  std::string key = kind_name();
  key += '\n';
  key += text;
  for (const std::string& c : choices) {  // length-prefixed: no choice can pose as two
    key += '\n' + std::to_string(c.size()) + ':';
    key += c;
  }
  return key;
}

}  // namespace db

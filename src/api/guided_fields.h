// The request fields that constrain the output: OpenAI's `response_format`
// ({"type": "text" | "json_object" | "json_schema", "json_schema": {"name",
// "schema", "strict", "description"}}) and vLLM's extensions `guided_json` (a
// schema, as an object or its JSON text), `guided_regex`, `guided_grammar` (EBNF)
// and `guided_choice` (a list of strings). At most one of them may constrain a
// request; `response_format: {"type": "text"}` constrains nothing.
#pragma once
#include <optional>
#include <string>

#include "api/json_fields.h"
#include "grammar/grammar_spec.h"

namespace db::api {

struct GuidedOutput {
  GrammarSpec spec;
  std::string field;  // the request field it came from, for errors ("response_format", "guided_regex", ...)
};

// Throws ApiError naming the field when one is malformed or two constrain at once.
std::optional<GuidedOutput> parse_guided_fields(const Json& body);

}  // namespace db::api

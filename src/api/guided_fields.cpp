#include "api/guided_fields.h"

#include <string>
#include <utility>
#include <vector>

#include "api/api_error.h"

namespace db::api {

namespace {

// A schema given as an object, or as the JSON text of one.
std::string schema_text(const Json& v, const std::string& param) {
  if (v.is_object() || v.is_boolean()) return v.dump();
  if (v.is_string()) {
    const Json parsed = Json::parse(v.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !(parsed.is_object() || parsed.is_boolean()))
      invalid_param("'" + param + "' must be a JSON schema (an object, or its JSON text)", param);
    return parsed.dump();
  }
  invalid_param("'" + param + "' must be a JSON schema object, got " + json_type_name(v), param, "invalid_type");
}

std::optional<GrammarSpec> parse_response_format(const Json& body) {
  const Json* rf = find_field(body, "response_format");
  if (!rf) return std::nullopt;
  if (!rf->is_object())
    invalid_param("'response_format' must be an object, got " + json_type_name(*rf), "response_format", "invalid_type");
  for (auto it = rf->begin(); it != rf->end(); ++it)
    if (it.key() != "type" && it.key() != "json_schema")
      invalid_param("'response_format." + it.key() + "' is not a field of response_format", "response_format." + it.key(),
          "unknown_parameter");
  const std::optional<std::string> type = opt_string(*rf, "type", "response_format.type");
  if (!type) invalid_param("'response_format.type' is required: text, json_object or json_schema", "response_format.type");
  if (*type == "text") return std::nullopt;
  GrammarSpec spec;
  if (*type == "json_object") {
    spec.kind = GrammarSpec::Kind::JsonObject;
    return spec;
  }
  if (*type != "json_schema")
    invalid_param("'response_format.type' must be text, json_object or json_schema, got '" + *type + "'", "response_format.type");
  const Json* js = find_field(*rf, "json_schema");
  if (!js || !js->is_object())
    invalid_param("'response_format.json_schema' must be an object holding 'schema'", "response_format.json_schema");
  for (auto it = js->begin(); it != js->end(); ++it)
    if (it.key() != "name" && it.key() != "schema" && it.key() != "strict" && it.key() != "description")
      invalid_param("'response_format.json_schema." + it.key() + "' is not a field of json_schema",
          "response_format.json_schema." + it.key(), "unknown_parameter");
  opt_string(*js, "name", "response_format.json_schema.name");
  opt_string(*js, "description", "response_format.json_schema.description");
  opt_bool(*js, "strict", "response_format.json_schema.strict");  // the schema is always followed strictly
  const Json* schema = find_field(*js, "schema");
  if (!schema) invalid_param("'response_format.json_schema.schema' is required", "response_format.json_schema.schema");
  spec.kind = GrammarSpec::Kind::JsonSchema;
  spec.text = schema_text(*schema, "response_format.json_schema.schema");
  return spec;
}

std::optional<GrammarSpec> parse_choice(const Json& body) {
  const Json* v = find_field(body, "guided_choice");
  if (!v) return std::nullopt;
  if (!v->is_array() || v->empty())
    invalid_param("'guided_choice' must be a non-empty list of strings", "guided_choice", "invalid_type");
  GrammarSpec spec;
  spec.kind = GrammarSpec::Kind::Choice;
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& c = (*v)[i];
    const std::string param = "guided_choice[" + std::to_string(i) + "]";
    if (!c.is_string()) invalid_param("'" + param + "' must be a string, got " + json_type_name(c), param, "invalid_type");
    if (c.get_ref<const std::string&>().empty()) invalid_param("'" + param + "' must not be empty", param);
    spec.choices.push_back(c.get<std::string>());
  }
  return spec;
}

std::optional<GrammarSpec> parse_text_field(const Json& body, const char* key, GrammarSpec::Kind kind) {
  const std::optional<std::string> text = opt_string(body, key);
  if (!text) return std::nullopt;
  if (text->empty()) invalid_param(std::string("'") + key + "' must not be empty", key);
  GrammarSpec spec;
  spec.kind = kind;
  spec.text = *text;
  return spec;
}

}  // namespace

std::optional<GuidedOutput> parse_guided_fields(const Json& body) {
  std::vector<std::pair<const char*, std::optional<GrammarSpec>>> given;
  given.emplace_back("response_format", parse_response_format(body));
  if (const Json* gj = find_field(body, "guided_json")) {
    GrammarSpec spec;
    spec.kind = GrammarSpec::Kind::JsonSchema;
    spec.text = schema_text(*gj, "guided_json");
    given.emplace_back("guided_json", std::move(spec));
  }
  given.emplace_back("guided_regex", parse_text_field(body, "guided_regex", GrammarSpec::Kind::Regex));
  given.emplace_back("guided_grammar", parse_text_field(body, "guided_grammar", GrammarSpec::Kind::Ebnf));
  given.emplace_back("guided_choice", parse_choice(body));
  std::optional<GuidedOutput> out;
  for (auto& [key, s] : given) {
    if (!s) continue;
    if (out) invalid_param(std::string("'") + key + "' and '" + out->field + "' both constrain the output; give one", key);
    out = GuidedOutput{std::move(*s), key};
  }
  return out;
}

}  // namespace db::api

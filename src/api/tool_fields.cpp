#include "api/tool_fields.h"

#include <algorithm>

#include "api/api_error.h"

namespace db::api {

namespace {

bool valid_function_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

void check_keys(const Json& obj, std::initializer_list<const char*> allowed, const std::string& param) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* k) { return it.key() == k; }))
      invalid_param("'" + param + "." + it.key() + "' is not a field of " + param, param + "." + it.key(), "unknown_parameter");
}

ToolFunction parse_tool(const Json& tool, const std::string& param) {
  if (!tool.is_object()) invalid_param("'" + param + "' must be an object, got " + json_type_name(tool), param, "invalid_type");
  check_keys(tool, {"type", "function"}, param);
  const std::string type = opt_string(tool, "type", param + ".type").value_or("");
  if (type != "function") invalid_param("'" + param + ".type' must be \"function\"", param + ".type");
  const Json* fn = find_field(tool, "function");
  const std::string fparam = param + ".function";
  if (!fn || !fn->is_object()) invalid_param("'" + fparam + "' must be an object holding 'name'", fparam);
  check_keys(*fn, {"name", "description", "parameters", "strict"}, fparam);
  ToolFunction f;
  f.name = opt_string(*fn, "name", fparam + ".name").value_or("");
  if (!valid_function_name(f.name))
    invalid_param("'" + fparam + ".name' must be 1 to 64 characters of a-z, A-Z, 0-9, _ and -", fparam + ".name");
  opt_string(*fn, "description", fparam + ".description");
  opt_bool(*fn, "strict", fparam + ".strict");  // calls that the grammar constrains always follow the schema
  const Json* params = find_field(*fn, "parameters");
  if (params && !params->is_object())
    invalid_param("'" + fparam + ".parameters' must be a JSON schema object, got " + json_type_name(*params),
        fparam + ".parameters", "invalid_type");
  f.parameters = params ? *params : Json{{"type", "object"}, {"properties", Json::object()}};
  return f;
}

void parse_choice(const Json& body, ToolRequest& r) {
  const Json* c = find_field(body, "tool_choice");
  r.choice = r.functions.empty() ? ToolRequest::Choice::None : ToolRequest::Choice::Auto;
  if (!c) return;
  if (c->is_string()) {
    const std::string s = c->get<std::string>();
    if (s == "none") r.choice = ToolRequest::Choice::None;
    else if (s == "auto") r.choice = ToolRequest::Choice::Auto;
    else if (s == "required") r.choice = ToolRequest::Choice::Required;
    else invalid_param("'tool_choice' must be \"none\", \"auto\", \"required\" or a named function, got \"" + s + "\"",
             "tool_choice");
  } else if (c->is_object()) {
    check_keys(*c, {"type", "function"}, "tool_choice");
    if (opt_string(*c, "type", "tool_choice.type").value_or("") != "function")
      invalid_param("'tool_choice.type' must be \"function\"", "tool_choice.type");
    const Json* fn = find_field(*c, "function");
    if (!fn || !fn->is_object()) invalid_param("'tool_choice.function' must be an object holding 'name'", "tool_choice.function");
    check_keys(*fn, {"name"}, "tool_choice.function");
    r.named = opt_string(*fn, "name", "tool_choice.function.name").value_or("");
    r.choice = ToolRequest::Choice::Named;
    if (std::none_of(r.functions.begin(), r.functions.end(), [&](const ToolFunction& f) { return f.name == r.named; }))
      invalid_param("'tool_choice.function.name' names \"" + r.named + "\", which is not among 'tools'",
          "tool_choice.function.name");
  } else {
    invalid_param("'tool_choice' must be a string or an object, got " + json_type_name(*c), "tool_choice", "invalid_type");
  }
  if (r.choice != ToolRequest::Choice::None && r.functions.empty())
    invalid_param("'tool_choice' needs 'tools' to choose from", "tool_choice");
}

}  // namespace

ToolRequest parse_tool_fields(const Json& body) {
  ToolRequest r;
  if (const Json* tools = find_field(body, "tools")) {
    if (!tools->is_array()) invalid_param("'tools' must be a list, got " + json_type_name(*tools), "tools", "invalid_type");
    if (tools->size() > kMaxTools)
      invalid_param("'tools' holds " + std::to_string(tools->size()) + " tools; at most " + std::to_string(kMaxTools) +
              " are allowed",
          "tools");
    for (size_t i = 0; i < tools->size(); ++i) {
      const std::string param = "tools[" + std::to_string(i) + "]";
      ToolFunction f = parse_tool((*tools)[i], param);
      if (std::any_of(r.functions.begin(), r.functions.end(), [&](const ToolFunction& g) { return g.name == f.name; }))
        invalid_param("'" + param + ".function.name' repeats the name \"" + f.name + "\"", param + ".function.name");
      r.functions.push_back(std::move(f));
    }
    if (!r.functions.empty()) r.tools = *tools;
  }
  parse_choice(body, r);
  r.parallel = opt_bool(body, "parallel_tool_calls").value_or(true);
  return r;
}

std::optional<GrammarSpec> ToolRequest::constraint() const {
  if (choice != Choice::Required && choice != Choice::Named) return std::nullopt;
  Json schema;
  if (choice == Choice::Named) {
    schema = std::find_if(functions.begin(), functions.end(), [&](const ToolFunction& f) { return f.name == named; })
                 ->parameters;
  } else {
    Json any = Json::array();
    for (const ToolFunction& f : functions)
      any.push_back({{"type", "object"},
                     {"properties", {{"name", {{"type", "string"}, {"const", f.name}}}, {"parameters", f.parameters}}},
                     {"required", {"name", "parameters"}},
                     {"additionalProperties", false}});
    schema = {{"type", "array"}, {"minItems", 1}, {"items", {{"anyOf", std::move(any)}}}};
    if (!parallel) schema["maxItems"] = 1;
  }
  GrammarSpec spec;
  spec.kind = GrammarSpec::Kind::JsonSchema;
  spec.text = schema.dump();
  return spec;
}

}  // namespace db::api

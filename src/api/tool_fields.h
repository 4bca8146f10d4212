// The chat request fields about tools: `tools` (a list of {"type": "function",
// "function": {"name", "description", "parameters", "strict"}}), `tool_choice`
// ("none", "auto", "required" or {"type": "function", "function": {"name"}}) and
// `parallel_tool_calls` (true by default).
//
// How a choice is honoured:
//   auto      the template shows the model the tools; calls it writes in its own
//             format (chat/tool_call_format.h) are parsed out of the answer.
//   required  the output is constrained to a JSON list of one or more
//             {"name", "parameters"} objects, each valid for its function.
//   named     the output is constrained to the function's parameters object.
//   none      the tools are not shown to the model and nothing is parsed.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "api/json_fields.h"
#include "grammar/grammar_spec.h"

namespace db::api {

// OpenAI's limit on the number of tools in a request.
inline constexpr size_t kMaxTools = 128;

struct ToolFunction {
  std::string name;  // [A-Za-z0-9_-], 1 to 64 characters
  Json parameters;   // a JSON schema object ({"type": "object", "properties": {}} when not given)
};

struct ToolRequest {
  enum class Choice { None, Auto, Required, Named };
  Json tools = nullptr;  // the request's list as given (for the template); null when there are none
  std::vector<ToolFunction> functions;
  Choice choice = Choice::None;
  std::string named;          // Choice::Named: the function's name
  bool parallel = true;       // more than one call per answer

  bool active() const { return choice != Choice::None; }
  // What the output must follow for Required and Named; nullopt otherwise.
  std::optional<GrammarSpec> constraint() const;
};

// Throws ApiError naming the field: a malformed tool, a duplicate name, a choice
// naming no tool, a tool_choice other than none without tools.
ToolRequest parse_tool_fields(const Json& body);

}  // namespace db::api

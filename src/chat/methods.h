// Python methods of str, list and dict values that templates call
// (`content.strip()`, `message.get('x')`, `tool.items()`, ...).
#pragma once
#include <optional>
#include <string>

#include "chat/value.h"

namespace db::chat {

// `obj.name` as a bound method; nullopt when the type has no such attribute.
// Methods that mutate a container yield an Undefined explaining that the
// sandbox refuses them, as jinja2's ImmutableSandboxedEnvironment does.
std::optional<Value> bound_method(const Value& obj, const std::string& name);

}  // namespace db::chat

// Built-in filters, tests, globals and the argument binding they share.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "chat/value.h"

namespace db::chat {

// Binds call arguments to a Python-style signature `name(p0, p1, ...)`;
// rejects unknown keywords, duplicates and surplus positionals.
class ArgBinder {
 public:
  ArgBinder(const char* function, const CallArgs& args, std::initializer_list<const char*> params);
  // Parameter i given by position or keyword, or nullptr.
  const Value* find(size_t i) const;
  Value get_or(size_t i, Value fallback) const;

 private:
  const CallArgs& args_;             // the call being bound
  std::vector<const char*> params_;  // parameter names in order
};

using FilterFunction = Value (*)(const Value& input, CallArgs& args);
using TestFunction = bool (*)(const Value& input, CallArgs& args);

// nullptr when no filter/test of that name exists.
FilterFunction find_filter(const std::string& name);
TestFunction find_test(const std::string& name);

Value call_filter(const std::string& name, const Value& input, CallArgs& args);
bool call_test(const std::string& name, const Value& input, CallArgs& args);

// jinja2's attribute getter used by map/selectattr/sort: "a.b.0" paths.
Value get_attribute_path(const Value& item, const Value& attribute);

// Rejects underscore-prefixed namespace attributes, as transformers does.
void check_namespace_attribute(const Value& name);

// Globals every template sees: namespace, range, dict, raise_exception,
// strftime_now. Namespaces created by this render are appended to
// `namespaces` so that the caller can break reference cycles afterwards.
void add_globals(DictData& globals, std::vector<std::shared_ptr<ObjectData>>& namespaces);

}  // namespace db::chat

// Python/jinja2 semantics of operators, attribute and item access on values.
// Errors are thrown as db::Error with Python's wording.
#pragma once
#include <string>

#include "chat/value.h"

namespace db::chat::ops {

// Throws the error jinja2 raises when an Undefined value is used
// ("'x' is undefined", "'dict object' has no attribute 'y'", ...).
[[noreturn]] void fail_undefined(const Value& undefined);

Value add(const Value& a, const Value& b);
Value sub(const Value& a, const Value& b);
Value mul(const Value& a, const Value& b);
Value truediv(const Value& a, const Value& b);
Value floordiv(const Value& a, const Value& b);
Value mod(const Value& a, const Value& b);
Value pow(const Value& a, const Value& b);
Value neg(const Value& a);
Value pos(const Value& a);

// `item in container`.
bool contains(const Value& container, const Value& item);

// jinja2's sandboxed getattr(obj, name): Python attribute (bound method),
// then obj[name], then Undefined.
Value getattr(const Value& obj, const std::string& name);
// jinja2's getitem(obj, key): obj[key], then attribute for string keys, then Undefined.
Value getitem(const Value& obj, const Value& key);
// obj[start:stop:step] on strings, lists and tuples; null parts are Undefined.
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// "'dict object'" / "'None'" as jinja2 names objects in undefined messages.
std::string object_type_repr(const Value& obj);

}  // namespace db::chat::ops

// jinja2's built-in tests (`x is defined`, `x is string`, ...).
#include <unordered_map>

#include "chat/builtins.h"
#include "chat/operators.h"
#include "chat/text.h"
#include "chat/value_format.h"
#include "util/error.h"

namespace db::chat {

namespace {

const Value& required(const ArgBinder& b, size_t i, const char* test) {
  const Value* v = b.find(i);
  if (!v) throw Error(std::string("test '") + test + "' requires an argument");
  return *v;
}

bool t_defined(const Value& v, CallArgs& a) { ArgBinder("defined", a, {}); return !v.is_undefined(); }
bool t_undefined(const Value& v, CallArgs& a) { ArgBinder("undefined", a, {}); return v.is_undefined(); }
bool t_none(const Value& v, CallArgs& a) { ArgBinder("none", a, {}); return v.is_none(); }
bool t_boolean(const Value& v, CallArgs& a) { ArgBinder("boolean", a, {}); return v.is_bool(); }
bool t_false(const Value& v, CallArgs& a) { ArgBinder("false", a, {}); return v.is_bool() && !v.as_bool(); }
bool t_true(const Value& v, CallArgs& a) { ArgBinder("true", a, {}); return v.is_bool() && v.as_bool(); }
bool t_integer(const Value& v, CallArgs& a) { ArgBinder("integer", a, {}); return v.is_int(); }
bool t_float(const Value& v, CallArgs& a) { ArgBinder("float", a, {}); return v.is_float(); }
bool t_number(const Value& v, CallArgs& a) { ArgBinder("number", a, {}); return v.is_number(); }
bool t_string(const Value& v, CallArgs& a) { ArgBinder("string", a, {}); return v.is_string(); }
bool t_mapping(const Value& v, CallArgs& a) { ArgBinder("mapping", a, {}); return v.is_dict(); }
bool t_callable(const Value& v, CallArgs& a) { ArgBinder("callable", a, {}); return v.is_callable() || v.is_undefined(); }
bool t_escaped(const Value&, CallArgs& a) { ArgBinder("escaped", a, {}); return false; }

bool t_sequence(const Value& v, CallArgs& a) {
  ArgBinder("sequence", a, {});
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}

bool t_iterable(const Value& v, CallArgs& a) {
  ArgBinder("iterable", a, {});
  return v.is_string() || v.is_list() || v.is_dict() || v.is_undefined();
}

bool t_lower(const Value& v, CallArgs& a) {
  ArgBinder("lower", a, {});
  bool cased = false;
  for (char32_t c : text::decode(to_str(v))) {
    if (text::is_upper(c)) return false;
    cased = cased || text::is_lower(c);
  }
  return cased;
}

bool t_upper(const Value& v, CallArgs& a) {
  ArgBinder("upper", a, {});
  bool cased = false;
  for (char32_t c : text::decode(to_str(v))) {
    if (text::is_lower(c)) return false;
    cased = cased || text::is_upper(c);
  }
  return cased;
}

bool t_odd(const Value& v, CallArgs& a) {
  ArgBinder("odd", a, {});
  return equals(ops::mod(v, Value::integer(2)), Value::integer(1));
}

bool t_even(const Value& v, CallArgs& a) {
  ArgBinder("even", a, {});
  return equals(ops::mod(v, Value::integer(2)), Value::integer(0));
}

bool t_divisibleby(const Value& v, CallArgs& a) {
  ArgBinder b("divisibleby", a, {"num"});
  return equals(ops::mod(v, required(b, 0, "divisibleby")), Value::integer(0));
}

bool t_sameas(const Value& v, CallArgs& a) {
  ArgBinder b("sameas", a, {"other"});
  const Value& other = required(b, 0, "sameas");
  if (v.kind() != other.kind()) return false;
  switch (v.kind()) {
    case Kind::None:
    case Kind::Undefined: return true;
    case Kind::Bool: return v.as_bool() == other.as_bool();
    case Kind::Int: return v.as_int() == other.as_int();
    default: return v.identity() != nullptr && v.identity() == other.identity();
  }
}

bool t_in(const Value& v, CallArgs& a) {
  ArgBinder b("in", a, {"seq"});
  return ops::contains(required(b, 0, "in"), v);
}

bool t_filter(const Value& v, CallArgs& a) {
  ArgBinder("filter", a, {});
  return v.is_string() && find_filter(v.as_string()) != nullptr;
}

bool t_test(const Value& v, CallArgs& a) {
  ArgBinder("test", a, {});
  return v.is_string() && find_test(v.as_string()) != nullptr;
}

template <int Op>
bool t_compare(const Value& v, CallArgs& a) {
  ArgBinder b("comparison", a, {"other"});
  const Value& other = required(b, 0, "comparison");
  switch (Op) {
    case 0: return equals(v, other);
    case 1: return !equals(v, other);
    case 2: return less_than(other, v);   // gt
    case 3: return !less_than(v, other);  // ge
    case 4: return less_than(v, other);   // lt
    default: return !less_than(other, v); // le
  }
}

const std::unordered_map<std::string, TestFunction>& test_table() {
  static const std::unordered_map<std::string, TestFunction> table = {
      {"odd", t_odd},           {"even", t_even},         {"divisibleby", t_divisibleby},
      {"defined", t_defined},   {"undefined", t_undefined}, {"filter", t_filter},
      {"test", t_test},         {"none", t_none},         {"boolean", t_boolean},
      {"false", t_false},       {"true", t_true},         {"integer", t_integer},
      {"float", t_float},       {"lower", t_lower},       {"upper", t_upper},
      {"string", t_string},     {"mapping", t_mapping},   {"number", t_number},
      {"sequence", t_sequence}, {"iterable", t_iterable}, {"callable", t_callable},
      {"sameas", t_sameas},     {"escaped", t_escaped},   {"in", t_in},
      {"==", t_compare<0>},     {"eq", t_compare<0>},     {"equalto", t_compare<0>},
      {"!=", t_compare<1>},     {"ne", t_compare<1>},     {">", t_compare<2>},
      {"gt", t_compare<2>},     {"greaterthan", t_compare<2>}, {">=", t_compare<3>},
      {"ge", t_compare<3>},     {"<", t_compare<4>},      {"lt", t_compare<4>},
      {"lessthan", t_compare<4>}, {"<=", t_compare<5>},   {"le", t_compare<5>},
  };
  return table;
}

}  // namespace

TestFunction find_test(const std::string& name) {
  const auto& t = test_table();
  const auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

bool call_test(const std::string& name, const Value& input, CallArgs& args) {
  const TestFunction f = find_test(name);
  if (!f) throw Error("no test named '" + name + "'");
  return f(input, args);
}

}  // namespace db::chat

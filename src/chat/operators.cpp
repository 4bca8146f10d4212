#include "chat/operators.h"

#include <cmath>
#include <optional>

#include "chat/methods.h"
#include "chat/string_format.h"
#include "chat/text.h"
#include "chat/value_format.h"
#include "util/error.h"

namespace db::chat::ops {

namespace {

constexpr size_t kMaxRepeatBytes = size_t{1} << 28;  // bound on "x" * n results

bool is_int_like(const Value& v) { return v.is_int() || v.is_bool(); }

[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
  throw Error(std::string("unsupported operand type(s) for ") + op + ": '" + type_name(a) + "' and '" +
              type_name(b) + "'");
}

void check_defined(const Value& a, const Value& b) {
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
}

int64_t checked(bool overflow, int64_t value) {
  if (overflow) throw Error("integer overflow (values beyond 64 bits are not supported)");
  return value;
}

Value repeat(const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const std::string& s = seq.as_string();
    if (!s.empty() && static_cast<uint64_t>(n) > kMaxRepeatBytes / s.size()) throw Error("repeated string too large");
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += s;
    return Value::string(std::move(out));
  }
  const auto& items = seq.as_list();
  if (!items.empty() && static_cast<uint64_t>(n) > kMaxRepeatBytes / items.size()) throw Error("repeated list too large");
  std::vector<Value> out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), seq.is_tuple());
}

double float_floordiv(double a, double b) {
  const double m = std::fmod(a, b);
  double div = (a - m) / b;
  if (m != 0.0 && ((b < 0) != (m < 0))) div -= 1.0;
  if (div == 0.0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

double float_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0.0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = std::copysign(0.0, b);
  }
  return m;
}

// Python's normalisation of a slice bound for a sequence of length n.
int64_t slice_bound(const Value& v, int64_t n, int64_t step, bool is_start) {
  if (v.is_undefined() || v.is_none()) {
    if (step > 0) return is_start ? 0 : n;
    return is_start ? n - 1 : -1;
  }
  if (!is_int_like(v)) throw Error("slice indices must be integers or None or have an __index__ method");
  int64_t i = v.as_int();
  if (i < 0) {
    i += n;
    if (i < 0) i = step > 0 ? 0 : -1;
  } else if (i >= n) {
    i = step > 0 ? n : n - 1;
  }
  return i;
}

}  // namespace

void fail_undefined(const Value& undefined) {
  const std::string& hint = undefined.undefined_hint();
  throw Error(hint.empty() ? "undefined value used" : hint);
}

std::string object_type_repr(const Value& obj) {
  if (obj.is_none()) return "None";
  return type_name(obj) + " object";
}

Value add(const Value& a, const Value& b) {
  check_defined(a, b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return Value::number(a.as_double() + b.as_double());
    int64_t r = 0;
    const bool of = __builtin_add_overflow(a.as_int(), b.as_int(), &r);
    return Value::integer(checked(of, r));
  }
  if (a.is_string()) {
    if (!b.is_string()) throw Error("can only concatenate str (not \"" + type_name(b) + "\") to str");
    return Value::string(a.as_string() + b.as_string());
  }
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    std::vector<Value> out = a.as_list();
    out.insert(out.end(), b.as_list().begin(), b.as_list().end());
    return Value::list(std::move(out), a.is_tuple());
  }
  if (a.is_list()) {
    throw Error("can only concatenate " + type_name(a) + " (not \"" + type_name(b) + "\") to " + type_name(a));
  }
  unsupported("+", a, b);
}

Value sub(const Value& a, const Value& b) {
  check_defined(a, b);
  if (!a.is_number() || !b.is_number()) unsupported("-", a, b);
  if (a.is_float() || b.is_float()) return Value::number(a.as_double() - b.as_double());
  int64_t r = 0;
  const bool of = __builtin_sub_overflow(a.as_int(), b.as_int(), &r);
  return Value::integer(checked(of, r));
}

Value mul(const Value& a, const Value& b) {
  check_defined(a, b);
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return Value::number(a.as_double() * b.as_double());
    int64_t r = 0;
    const bool of = __builtin_mul_overflow(a.as_int(), b.as_int(), &r);
    return Value::integer(checked(of, r));
  }
  if ((a.is_string() || a.is_list()) && is_int_like(b)) return repeat(a, b.as_int());
  if ((b.is_string() || b.is_list()) && is_int_like(a)) return repeat(b, a.as_int());
  if (a.is_string() || b.is_string() || a.is_list() || b.is_list()) {
    const Value& non_int = (a.is_string() || a.is_list()) ? b : a;
    throw Error("can't multiply sequence by non-int of type '" + type_name(non_int) + "'");
  }
  unsupported("*", a, b);
}

Value truediv(const Value& a, const Value& b) {
  check_defined(a, b);
  if (!a.is_number() || !b.is_number()) unsupported("/", a, b);
  if (b.as_double() == 0.0) throw Error(a.is_float() || b.is_float() ? "float division by zero" : "division by zero");
  return Value::number(a.as_double() / b.as_double());
}

Value floordiv(const Value& a, const Value& b) {
  check_defined(a, b);
  if (!a.is_number() || !b.is_number()) unsupported("//", a, b);
  if (a.is_float() || b.is_float()) {
    if (b.as_double() == 0.0) throw Error("float floor division by zero");
    return Value::number(float_floordiv(a.as_double(), b.as_double()));
  }
  const int64_t x = a.as_int(), y = b.as_int();
  if (y == 0) throw Error("integer division or modulo by zero");
  if (x == INT64_MIN && y == -1) checked(true, 0);
  int64_t q = x / y;
  if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
  return Value::integer(q);
}

Value mod(const Value& a, const Value& b) {
  check_defined(a, b);
  if (a.is_string()) return Value::string(percent_format(a.as_string(), b));
  if (!a.is_number() || !b.is_number()) unsupported("%", a, b);
  if (a.is_float() || b.is_float()) {
    if (b.as_double() == 0.0) throw Error("float modulo");
    return Value::number(float_mod(a.as_double(), b.as_double()));
  }
  const int64_t x = a.as_int(), y = b.as_int();
  if (y == 0) throw Error("integer division or modulo by zero");
  if (y == -1) return Value::integer(0);
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return Value::integer(r);
}

Value pow(const Value& a, const Value& b) {
  check_defined(a, b);
  if (!a.is_number() || !b.is_number()) unsupported("** or pow()", a, b);
  if (a.is_float() || b.is_float() || b.as_int() < 0) {
    const double x = a.as_double(), y = b.as_double();
    if (x == 0.0 && y < 0) throw Error("0.0 cannot be raised to a negative power");
    if (x < 0 && y != std::floor(y)) throw Error("complex results are not supported");
    return Value::number(std::pow(x, y));
  }
  int64_t base = a.as_int(), exp = b.as_int(), result = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(result, base, &result)) checked(true, 0);
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) checked(true, 0);
  }
  return Value::integer(result);
}

Value neg(const Value& a) {
  if (a.is_undefined()) fail_undefined(a);
  if (a.is_float()) return Value::number(-a.as_double());
  if (is_int_like(a)) {
    if (a.as_int() == INT64_MIN) checked(true, 0);
    return Value::integer(-a.as_int());
  }
  throw Error("bad operand type for unary -: '" + type_name(a) + "'");
}

Value pos(const Value& a) {
  if (a.is_undefined()) fail_undefined(a);
  if (a.is_float()) return a;
  if (is_int_like(a)) return Value::integer(a.as_int());
  throw Error("bad operand type for unary +: '" + type_name(a) + "'");
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Kind::Undefined: return false;
    case Kind::String:
      if (!item.is_string()) {
        throw Error("'in <string>' requires string as left operand, not " + type_name(item));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Kind::List:
      for (const auto& v : container.as_list()) {
        if (equals(v, item)) return true;
      }
      return false;
    case Kind::Dict: return container.as_dict().find(item) != nullptr;
    default: throw Error("argument of type '" + type_name(container) + "' is not iterable");
  }
}

namespace {

// obj[key] with Python semantics; nullopt where Python raises a lookup or type error.
std::optional<Value> python_item(const Value& obj, const Value& key) {
  if (obj.is_dict()) {
    const Value* v = obj.as_dict().find(key);
    if (v) return *v;
    return std::nullopt;
  }
  if ((obj.is_list() || obj.is_string()) && is_int_like(key)) {
    if (obj.is_list()) {
      const auto& items = obj.as_list();
      int64_t i = key.as_int();
      const auto n = static_cast<int64_t>(items.size());
      if (i < 0) i += n;
      if (i < 0 || i >= n) return std::nullopt;
      return items[static_cast<size_t>(i)];
    }
    const std::u32string cps = text::decode(obj.as_string());
    int64_t i = key.as_int();
    const auto n = static_cast<int64_t>(cps.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return std::nullopt;
    std::string s;
    text::append(s, cps[static_cast<size_t>(i)]);
    return Value::string(std::move(s));
  }
  return std::nullopt;
}

// Python attribute lookup: object attributes and bound methods.
std::optional<Value> python_attribute(const Value& obj, const std::string& name) {
  if (obj.is_object()) {
    const Value* v = obj.as_object().attributes.find(std::string_view(name));
    if (v) return *v;
    return std::nullopt;
  }
  if (obj.is_string() || obj.is_list() || obj.is_dict()) {
    if (!name.empty() && name[0] == '_') {
      return Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe.");
    }
    return bound_method(obj, name);
  }
  return std::nullopt;
}

}  // namespace

Value getattr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (auto attr = python_attribute(obj, name)) return *attr;
  if (auto item = python_item(obj, Value::string(name))) return *item;
  return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + name + "'");
}

Value getitem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (auto item = python_item(obj, key)) return *item;
  if (key.is_string()) {
    if (auto attr = python_attribute(obj, key.as_string())) return *attr;
    return Value::undefined("'" + object_type_repr(obj) + "' has no attribute '" + key.as_string() + "'");
  }
  return Value::undefined(object_type_repr(obj) + " has no element " + repr(key));
}

Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
  if (obj.is_undefined()) fail_undefined(obj);
  int64_t st = 1;
  if (!step.is_undefined() && !step.is_none()) {
    if (!is_int_like(step)) throw Error("slice indices must be integers or None or have an __index__ method");
    st = step.as_int();
    if (st == 0) throw Error("slice step cannot be zero");
  }
  std::u32string cps;
  int64_t n = 0;
  if (obj.is_string()) {
    cps = text::decode(obj.as_string());
    n = static_cast<int64_t>(cps.size());
  } else if (obj.is_list()) {
    n = static_cast<int64_t>(obj.as_list().size());
  } else {
    throw Error("'" + type_name(obj) + "' object is not subscriptable");
  }
  const int64_t b = slice_bound(start, n, st, true);
  const int64_t e = slice_bound(stop, n, st, false);
  std::vector<int64_t> indices;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) indices.push_back(i);
  if (obj.is_string()) {
    std::u32string out;
    for (int64_t i : indices) out.push_back(cps[static_cast<size_t>(i)]);
    return Value::string(text::encode(out));
  }
  std::vector<Value> out;
  for (int64_t i : indices) out.push_back(obj.as_list()[static_cast<size_t>(i)]);
  return Value::list(std::move(out), obj.is_tuple());
}

}  // namespace db::chat::ops

#include "chat/value.h"

#include <cmath>

#include "chat/text.h"
#include "util/error.h"

namespace db::chat {

const Value* DictData::find(const Value& key) const {
  if (key.is_string()) return find(std::string_view(key.as_string()));
  for (const auto& kv : items_) {
    if (equals(kv.first, key)) return &kv.second;
  }
  return nullptr;
}

const Value* DictData::find(std::string_view key) const {
  for (const auto& kv : items_) {
    if (kv.first.is_string() && kv.first.as_string() == key) return &kv.second;
  }
  return nullptr;
}

void DictData::set(const Value& key, Value value) {
  for (auto& kv : items_) {
    if (equals(kv.first, key)) {
      kv.second = std::move(value);
      return;
    }
  }
  items_.emplace_back(key, std::move(value));
}

Value Value::undefined(std::string hint) {
  Value v;
  v.kind_ = Kind::Undefined;
  v.s_ = std::make_shared<const std::string>(std::move(hint));
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.b_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.i_ = i;
  return v;
}

Value Value::number(double d) {
  Value v;
  v.kind_ = Kind::Float;
  v.d_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::String;
  v.s_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  Value v;
  v.kind_ = Kind::List;
  auto data = std::make_shared<ListData>();
  data->items = std::move(items);
  data->is_tuple = is_tuple;
  v.list_ = std::move(data);
  return v;
}

Value Value::dict(DictData d) {
  Value v;
  v.kind_ = Kind::Dict;
  v.dict_ = std::make_shared<const DictData>(std::move(d));
  return v;
}

Value Value::object(std::shared_ptr<ObjectData> obj) {
  Value v;
  v.kind_ = Kind::Object;
  v.object_ = std::move(obj);
  return v;
}

Value Value::callable(std::string name, NativeFunction fn) {
  Value v;
  v.kind_ = Kind::Callable;
  v.callable_ = std::make_shared<const CallableData>(CallableData{std::move(name), std::move(fn)});
  return v;
}

double Value::as_double() const {
  switch (kind_) {
    case Kind::Float: return d_;
    case Kind::Int: return static_cast<double>(i_);
    case Kind::Bool: return b_ ? 1.0 : 0.0;
    default: DB_CHECK(false, "as_double on a non-number");
  }
  return 0.0;
}

const std::string& Value::undefined_hint() const {
  static const std::string kEmpty;
  return s_ ? *s_ : kEmpty;
}

const void* Value::identity() const {
  switch (kind_) {
    case Kind::String: return s_.get();
    case Kind::List: return list_.get();
    case Kind::Dict: return dict_.get();
    case Kind::Object: return object_.get();
    case Kind::Callable: return callable_.get();
    default: return nullptr;
  }
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return v.is_tuple() ? "tuple" : "list";
    case Kind::Dict: return "dict";
    case Kind::Object: return v.as_object().type_name;
    case Kind::Callable: return "function";
  }
  return "object";
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return v.as_bool();
    case Kind::Int: return v.as_int() != 0;
    case Kind::Float: return v.as_double() != 0.0;
    case Kind::String: return !v.as_string().empty();
    case Kind::List: return !v.as_list().empty();
    case Kind::Dict: return v.as_dict().size() != 0;
    case Kind::Object:
    case Kind::Callable: return true;
  }
  return false;
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String: return a.as_string() == b.as_string();
    case Kind::List: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const auto& x = a.as_list();
      const auto& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equals(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::Dict: {
      const auto& x = a.as_dict();
      const auto& y = b.as_dict();
      if (x.size() != y.size()) return false;
      for (const auto& kv : x.items()) {
        const Value* other = y.find(kv.first);
        if (!other || !equals(kv.second, *other)) return false;
      }
      return true;
    }
    default: return a.identity() == b.identity();
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order == code point order
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const auto& x = a.as_list();
    const auto& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less_than(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  throw Error("'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) throw Error("chat template context: integer " + j.dump() + " is too large");
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) items.push_back(from_json(e));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      DictData d;
      for (auto it = j.begin(); it != j.end(); ++it) d.set(Value::string(it.key()), from_json(it.value()));
      return Value::dict(std::move(d));
    }
    default: throw Error("chat template context: unsupported JSON value " + j.dump());
  }
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined: return {};
    case Kind::List: return v.as_list();
    case Kind::Dict: {
      std::vector<Value> keys;
      keys.reserve(v.as_dict().size());
      for (const auto& kv : v.as_dict().items()) keys.push_back(kv.first);
      return keys;
    }
    case Kind::String: {
      std::vector<Value> chars;
      for (char32_t c : text::decode(v.as_string())) {
        std::string s;
        text::append(s, c);
        chars.push_back(Value::string(std::move(s)));
      }
      return chars;
    }
    default: throw Error("'" + type_name(v) + "' object is not iterable");
  }
}

int64_t length(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined: return 0;
    case Kind::String: return static_cast<int64_t>(text::length(v.as_string()));
    case Kind::List: return static_cast<int64_t>(v.as_list().size());
    case Kind::Dict: return static_cast<int64_t>(v.as_dict().size());
    default: throw Error("object of type '" + type_name(v) + "' has no len()");
  }
}

}  // namespace db::chat

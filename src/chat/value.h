// The dynamic value model of the template interpreter, mirroring the Python
// objects jinja2 works on: Undefined, None, bool, int, float, str, list/tuple,
// dict (insertion-ordered), namespace/loop objects and callables.
// Containers are shared by reference like Python objects; only namespaces
// are mutated after construction.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace db::chat {

class Value;

enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Object, Callable };

// Arguments of a call: positional values then keyword values, in call order.
struct CallArgs {
  std::vector<Value> positional;                        // f(a, b)
  std::vector<std::pair<std::string, Value>> keywords;  // f(k=v)
};

using NativeFunction = std::function<Value(CallArgs&)>;

struct ListData {
  std::vector<Value> items;  // elements in order
  bool is_tuple = false;     // a Python tuple (affects repr only)
};

// Insertion-ordered mapping with Python key equality.
class DictData {
 public:
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(const Value& key, Value value);  // replaces in place or appends
  const std::vector<std::pair<Value, Value>>& items() const { return items_; }
  size_t size() const { return items_.size(); }

 private:
  std::vector<std::pair<Value, Value>> items_;  // (key, value) in insertion order
};

// Attribute objects: jinja2's Namespace (mutable via `set ns.x = ...`) and
// the read-only `loop` variable.
struct ObjectData {
  std::string type_name;     // "Namespace" or "LoopContext"
  DictData attributes;       // attribute name -> value
  bool is_namespace = false; // accepts `set obj.attr = ...`
};

struct CallableData {
  std::string name;     // for messages and repr
  NativeFunction call;  // the implementation
};

class Value {
 public:
  Value() = default;  // Undefined without a hint

  static Value undefined(std::string hint);
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);
  static Value string(std::string s);
  static Value list(std::vector<Value> items, bool is_tuple = false);
  static Value dict(DictData d);
  static Value object(std::shared_ptr<ObjectData> obj);
  static Value callable(std::string name, NativeFunction fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_int() const { return kind_ == Kind::Int; }
  bool is_float() const { return kind_ == Kind::Float; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_tuple() const { return kind_ == Kind::List && list_->is_tuple; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_object() const { return kind_ == Kind::Object; }
  bool is_callable() const { return kind_ == Kind::Callable; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return kind_ == Kind::Bool ? (b_ ? 1 : 0) : i_; }
  double as_double() const;  // any number
  const std::string& as_string() const { return *s_; }
  const std::string& undefined_hint() const;  // message for errors on use
  const std::vector<Value>& as_list() const { return list_->items; }
  const DictData& as_dict() const { return *dict_; }
  ObjectData& as_object() const { return *object_; }  // shared: namespaces mutate in place
  const CallableData& as_callable() const { return *callable_; }
  // Identity of containers (jinja2's `sameas`).
  const void* identity() const;

 private:
  Kind kind_ = Kind::Undefined;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0.0;
  std::shared_ptr<const std::string> s_;  // string value, or the undefined hint
  std::shared_ptr<const ListData> list_;
  std::shared_ptr<const DictData> dict_;
  std::shared_ptr<ObjectData> object_;
  std::shared_ptr<const CallableData> callable_;
};

// Python type name: 'str', 'int', 'dict', 'list', 'tuple', 'NoneType', ...
std::string type_name(const Value& v);
bool truthy(const Value& v);
// Python ==, with 1 == 1.0 == True and deep container comparison.
bool equals(const Value& a, const Value& b);
// Python ordering (<): numbers, strings, lists/tuples; other pairs throw db::Error.
bool less_than(const Value& a, const Value& b);

// Conversions from and to JSON; from_json keeps object key order.
Value from_json(const nlohmann::ordered_json& j);

// Iterates like Python's iter(): list items, dict keys, string characters;
// Undefined yields nothing; other kinds throw db::Error.
std::vector<Value> iterate(const Value& v);
// Python len(); Undefined has length 0; other kinds throw db::Error.
int64_t length(const Value& v);

}  // namespace db::chat

// Global functions of the chat-template environment.
#include <ctime>

#include "chat/builtins.h"
#include "chat/chat_template.h"
#include "chat/value_format.h"
#include "util/error.h"

namespace db::chat {

namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2 sandbox MAX_RANGE

// dict(*args, **kwargs) into `out`.
void build_dict(const char* fn, CallArgs& args, DictData& out) {
  if (args.positional.size() > 1) {
    throw Error(std::string(fn) + " expected at most 1 positional argument, got " + std::to_string(args.positional.size()));
  }
  if (!args.positional.empty()) {
    const Value& src = args.positional[0];
    if (src.is_dict()) {
      for (const auto& kv : src.as_dict().items()) out.set(kv.first, kv.second);
    } else if (src.is_object() && src.as_object().is_namespace) {
      for (const auto& kv : src.as_object().attributes.items()) out.set(kv.first, kv.second);
    } else {
      for (const Value& pair : iterate(src)) {
        const std::vector<Value> kv = iterate(pair);
        if (kv.size() != 2) throw Error("dictionary update sequence element has length " + std::to_string(kv.size()) + "; 2 is required");
        out.set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& kw : args.keywords) out.set(Value::string(kw.first), kw.second);
}

}  // namespace

void check_namespace_attribute(const Value& key) {
  if (key.is_string() && !key.as_string().empty() && key.as_string()[0] == '_') {
    throw Error("Chat templates cannot store underscore-prefixed attributes on a namespace, but got " + repr(key) +
                ". Please rename the attribute.");
  }
}

namespace {

Value g_namespace(CallArgs& args, std::vector<std::shared_ptr<ObjectData>>& created) {
  auto obj = std::make_shared<ObjectData>();
  created.push_back(obj);
  obj->type_name = "Namespace";
  obj->is_namespace = true;
  build_dict("namespace", args, obj->attributes);
  for (const auto& kv : obj->attributes.items()) check_namespace_attribute(kv.first);
  return Value::object(std::move(obj));
}

Value g_dict(CallArgs& args) {
  DictData d;
  build_dict("dict", args, d);
  return Value::dict(std::move(d));
}

Value g_range(CallArgs& args) {
  ArgBinder b("range", args, {"start", "stop", "step"});
  for (const Value& v : args.positional) {
    if (!v.is_int() && !v.is_bool()) throw Error("'" + type_name(v) + "' object cannot be interpreted as an integer");
  }
  int64_t start = 0, stop = 0, step = 1;
  if (args.positional.size() == 1) {
    stop = args.positional[0].as_int();
  } else if (args.positional.size() >= 2) {
    start = args.positional[0].as_int();
    stop = args.positional[1].as_int();
    if (args.positional.size() == 3) step = args.positional[2].as_int();
  } else {
    throw Error("range expected at least 1 argument, got 0");
  }
  if (step == 0) throw Error("range() arg 3 must not be zero");
  std::vector<Value> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(out.size()) >= kMaxRange) {
      throw Error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
    }
    out.push_back(Value::integer(i));
  }
  return Value::list(std::move(out));
}

Value g_raise_exception(CallArgs& args) {
  ArgBinder b("raise_exception", args, {"message"});
  throw TemplateRaisedError(to_str(b.get_or(0, Value::string(""))));
}

Value g_strftime_now(CallArgs& args) {
  ArgBinder b("strftime_now", args, {"format"});
  const Value format = b.get_or(0, Value::string(""));
  if (!format.is_string()) throw Error("strftime() argument 1 must be str, not " + type_name(format));
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[512];
  const size_t n = std::strftime(buf, sizeof(buf), format.as_string().c_str(), &local);
  return Value::string(std::string(buf, n));
}

}  // namespace

void add_globals(DictData& globals, std::vector<std::shared_ptr<ObjectData>>& namespaces) {
  auto* created = &namespaces;
  globals.set(Value::string("namespace"),
              Value::callable("namespace", [created](CallArgs& args) { return g_namespace(args, *created); }));
  globals.set(Value::string("dict"), Value::callable("dict", g_dict));
  globals.set(Value::string("range"), Value::callable("range", g_range));
  globals.set(Value::string("raise_exception"), Value::callable("raise_exception", g_raise_exception));
  globals.set(Value::string("strftime_now"), Value::callable("strftime_now", g_strftime_now));
}

}  // namespace db::chat

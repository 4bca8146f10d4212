#include "chat/methods.h"

#include <unordered_map>
#include <unordered_set>

#include "chat/builtins.h"
#include "chat/operators.h"
#include "chat/string_format.h"
#include "chat/text.h"
#include "chat/value_format.h"
#include "util/error.h"

namespace db::chat {

namespace {

using Method = Value (*)(const Value& self, CallArgs& args);

std::string require_str(const char* what, const Value& v) {
  if (!v.is_string()) throw Error(std::string(what) + " must be str, not " + type_name(v));
  return v.as_string();
}

std::optional<std::string> optional_str(const char* what, const Value* v) {
  if (!v || v->is_none()) return std::nullopt;
  return require_str(what, *v);
}

int64_t optional_int(const Value* v, int64_t fallback) {
  if (!v || v->is_none()) return fallback;
  if (!v->is_int() && !v->is_bool()) throw Error("'" + type_name(*v) + "' object cannot be interpreted as an integer");
  return v->as_int();
}

Value string_list(const std::vector<std::string>& parts) {
  std::vector<Value> out;
  out.reserve(parts.size());
  for (const auto& p : parts) out.push_back(Value::string(p));
  return Value::list(std::move(out));
}

Value str_strip_impl(const char* fn, const Value& self, CallArgs& args, bool left, bool right) {
  ArgBinder a(fn, args, {"chars"});
  return Value::string(text::strip(self.as_string(), optional_str("strip arg", a.find(0)), left, right));
}

Value str_split_impl(const char* fn, const Value& self, CallArgs& args, bool reverse) {
  ArgBinder a(fn, args, {"sep", "maxsplit"});
  const auto sep = optional_str("sep", a.find(0));
  if (sep && sep->empty()) throw Error("empty separator");
  const int64_t maxsplit = optional_int(a.find(1), -1);
  const auto parts = reverse ? text::rsplit(self.as_string(), sep, maxsplit) : text::split(self.as_string(), sep, maxsplit);
  return string_list(parts);
}

Value str_affix_impl(const char* fn, const Value& self, CallArgs& args, bool at_end) {
  ArgBinder a(fn, args, {"prefix"});
  const Value* p = a.find(0);
  if (!p) throw Error(std::string(fn) + "() takes at least 1 argument (0 given)");
  const std::string& s = self.as_string();
  auto test = [&](const Value& v) {
    const std::string x = require_str(fn, v);
    if (x.size() > s.size()) return false;
    return at_end ? s.compare(s.size() - x.size(), x.size(), x) == 0 : s.compare(0, x.size(), x) == 0;
  };
  if (p->is_tuple()) {
    for (const auto& v : p->as_list()) {
      if (test(v)) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  if (!p->is_string()) {
    throw Error(std::string(fn) + " first arg must be str or a tuple of str, not " + type_name(*p));
  }
  return Value::boolean(test(*p));
}

template <typename Pred>
Value str_all(const Value& self, Pred pred) {
  const std::u32string cps = text::decode(self.as_string());
  if (cps.empty()) return Value::boolean(false);
  for (char32_t c : cps) {
    if (!pred(c)) return Value::boolean(false);
  }
  return Value::boolean(true);
}

Value str_find_impl(const char* fn, const Value& self, CallArgs& args, bool reverse, bool raise) {
  ArgBinder a(fn, args, {"sub"});
  const Value* sub = a.find(0);
  if (!sub) throw Error(std::string(fn) + "() takes at least 1 argument (0 given)");
  const int64_t at = text::find(self.as_string(), require_str(fn, *sub), reverse);
  if (raise && at < 0) throw Error("substring not found");
  return Value::integer(at);
}

Value str_pad(const char* fn, const Value& self, CallArgs& args, int where) {
  ArgBinder a(fn, args, {"width", "fillchar"});
  const int64_t width = optional_int(a.find(0), 0);
  const std::string fill = a.find(1) ? require_str("fillchar", *a.find(1)) : " ";
  if (text::length(fill) != 1) throw Error("The fill character must be exactly one character long");
  const int64_t len = static_cast<int64_t>(text::length(self.as_string()));
  if (width <= len) return self;
  const int64_t total = width - len;
  int64_t left = where < 0 ? 0 : where > 0 ? total : total / 2 + (total & width & 1);
  std::string out;
  for (int64_t i = 0; i < left; ++i) out += fill;
  out += self.as_string();
  for (int64_t i = 0; i < total - left; ++i) out += fill;
  return Value::string(std::move(out));
}

Value str_partition(const Value& self, CallArgs& args, bool reverse) {
  ArgBinder a(reverse ? "rpartition" : "partition", args, {"sep"});
  const Value* sep_v = a.find(0);
  if (!sep_v) throw Error("partition() takes exactly one argument (0 given)");
  const std::string sep = require_str("sep", *sep_v);
  if (sep.empty()) throw Error("empty separator");
  const std::string& s = self.as_string();
  const size_t hit = reverse ? s.rfind(sep) : s.find(sep);
  if (hit == std::string::npos) {
    return reverse ? Value::list({Value::string(""), Value::string(""), self}, true)
                   : Value::list({self, Value::string(""), Value::string("")}, true);
  }
  return Value::list({Value::string(s.substr(0, hit)), Value::string(sep), Value::string(s.substr(hit + sep.size()))},
                     true);
}

const std::unordered_map<std::string, Method>& str_methods() {
  static const std::unordered_map<std::string, Method> m = {
      {"strip", [](const Value& s, CallArgs& a) { return str_strip_impl("strip", s, a, true, true); }},
      {"lstrip", [](const Value& s, CallArgs& a) { return str_strip_impl("lstrip", s, a, true, false); }},
      {"rstrip", [](const Value& s, CallArgs& a) { return str_strip_impl("rstrip", s, a, false, true); }},
      {"split", [](const Value& s, CallArgs& a) { return str_split_impl("split", s, a, false); }},
      {"rsplit", [](const Value& s, CallArgs& a) { return str_split_impl("rsplit", s, a, true); }},
      {"splitlines",
       [](const Value& s, CallArgs& a) {
         ArgBinder("splitlines", a, {});
         return string_list(text::splitlines(s.as_string()));
       }},
      {"startswith", [](const Value& s, CallArgs& a) { return str_affix_impl("startswith", s, a, false); }},
      {"endswith", [](const Value& s, CallArgs& a) { return str_affix_impl("endswith", s, a, true); }},
      {"replace",
       [](const Value& s, CallArgs& a) {
         ArgBinder b("replace", a, {"old", "new", "count"});
         if (!b.find(0) || !b.find(1)) throw Error("replace() expected at least 2 arguments");
         return Value::string(text::replace(s.as_string(), require_str("replace() argument 1", *b.find(0)),
                                            require_str("replace() argument 2", *b.find(1)), optional_int(b.find(2), -1)));
       }},
      {"upper", [](const Value& s, CallArgs& a) { ArgBinder("upper", a, {}); return Value::string(text::upper(s.as_string())); }},
      {"lower", [](const Value& s, CallArgs& a) { ArgBinder("lower", a, {}); return Value::string(text::lower(s.as_string())); }},
      {"casefold", [](const Value& s, CallArgs& a) { ArgBinder("casefold", a, {}); return Value::string(text::lower(s.as_string())); }},
      {"title", [](const Value& s, CallArgs& a) { ArgBinder("title", a, {}); return Value::string(text::title_method(s.as_string())); }},
      {"capitalize", [](const Value& s, CallArgs& a) { ArgBinder("capitalize", a, {}); return Value::string(text::capitalize(s.as_string())); }},
      {"swapcase", [](const Value& s, CallArgs& a) { ArgBinder("swapcase", a, {}); return Value::string(text::swapcase(s.as_string())); }},
      {"find", [](const Value& s, CallArgs& a) { return str_find_impl("find", s, a, false, false); }},
      {"rfind", [](const Value& s, CallArgs& a) { return str_find_impl("rfind", s, a, true, false); }},
      {"index", [](const Value& s, CallArgs& a) { return str_find_impl("index", s, a, false, true); }},
      {"rindex", [](const Value& s, CallArgs& a) { return str_find_impl("rindex", s, a, true, true); }},
      {"count",
       [](const Value& s, CallArgs& a) {
         ArgBinder b("count", a, {"sub"});
         if (!b.find(0)) throw Error("count() takes at least 1 argument (0 given)");
         return Value::integer(text::count(s.as_string(), require_str("count", *b.find(0))));
       }},
      {"join",
       [](const Value& s, CallArgs& a) {
         ArgBinder b("join", a, {"iterable"});
         if (!b.find(0)) throw Error("str.join() takes exactly one argument (0 given)");
         std::string out;
         size_t i = 0;
         for (const Value& item : iterate(*b.find(0))) {
           if (!item.is_string()) {
             throw Error("sequence item " + std::to_string(i) + ": expected str instance, " + type_name(item) + " found");
           }
           if (i++) out += s.as_string();
           out += item.as_string();
         }
         return Value::string(std::move(out));
       }},
      {"isdigit", [](const Value& s, CallArgs&) { return str_all(s, [](char32_t c) { return c >= '0' && c <= '9'; }); }},
      {"isdecimal", [](const Value& s, CallArgs&) { return str_all(s, [](char32_t c) { return c >= '0' && c <= '9'; }); }},
      {"isnumeric", [](const Value& s, CallArgs&) { return str_all(s, [](char32_t c) { return c >= '0' && c <= '9'; }); }},
      {"isalpha", [](const Value& s, CallArgs&) { return str_all(s, text::is_alpha); }},
      {"isalnum",
       [](const Value& s, CallArgs&) { return str_all(s, [](char32_t c) { return text::is_alpha(c) || (c >= '0' && c <= '9'); }); }},
      {"isspace", [](const Value& s, CallArgs&) { return str_all(s, text::is_space); }},
      {"isupper",
       [](const Value& s, CallArgs&) {
         bool cased = false;
         for (char32_t c : text::decode(s.as_string())) {
           if (text::is_lower(c)) return Value::boolean(false);
           cased = cased || text::is_upper(c);
         }
         return Value::boolean(cased);
       }},
      {"islower",
       [](const Value& s, CallArgs&) {
         bool cased = false;
         for (char32_t c : text::decode(s.as_string())) {
           if (text::is_upper(c)) return Value::boolean(false);
           cased = cased || text::is_lower(c);
         }
         return Value::boolean(cased);
       }},
      {"removeprefix",
       [](const Value& s, CallArgs& a) {
         ArgBinder b("removeprefix", a, {"prefix"});
         const std::string p = b.find(0) ? require_str("removeprefix() argument", *b.find(0)) : "";
         const std::string& x = s.as_string();
         return x.compare(0, p.size(), p) == 0 ? Value::string(x.substr(p.size())) : s;
       }},
      {"removesuffix",
       [](const Value& s, CallArgs& a) {
         ArgBinder b("removesuffix", a, {"suffix"});
         const std::string p = b.find(0) ? require_str("removesuffix() argument", *b.find(0)) : "";
         const std::string& x = s.as_string();
         if (!p.empty() && x.size() >= p.size() && x.compare(x.size() - p.size(), p.size(), p) == 0) {
           return Value::string(x.substr(0, x.size() - p.size()));
         }
         return s;
       }},
      {"partition", [](const Value& s, CallArgs& a) { return str_partition(s, a, false); }},
      {"format", [](const Value& s, CallArgs& a) { return Value::string(brace_format(s.as_string(), a)); }},
      {"rpartition", [](const Value& s, CallArgs& a) { return str_partition(s, a, true); }},
      {"center", [](const Value& s, CallArgs& a) { return str_pad("center", s, a, 0); }},
      {"ljust", [](const Value& s, CallArgs& a) { return str_pad("ljust", s, a, -1); }},
      {"rjust", [](const Value& s, CallArgs& a) { return str_pad("rjust", s, a, 1); }},
  };
  return m;
}

const std::unordered_map<std::string, Method>& list_methods() {
  static const std::unordered_map<std::string, Method> m = {
      {"index",
       [](const Value& l, CallArgs& a) {
         ArgBinder b("index", a, {"value"});
         if (!b.find(0)) throw Error("index expected at least 1 argument, got 0");
         const auto& items = l.as_list();
         for (size_t i = 0; i < items.size(); ++i) {
           if (equals(items[i], *b.find(0))) return Value::integer(static_cast<int64_t>(i));
         }
         throw Error(repr(*b.find(0)) + " is not in list");
       }},
      {"count",
       [](const Value& l, CallArgs& a) {
         ArgBinder b("count", a, {"value"});
         if (!b.find(0)) throw Error("count() takes exactly one argument (0 given)");
         int64_t n = 0;
         for (const auto& v : l.as_list()) n += equals(v, *b.find(0)) ? 1 : 0;
         return Value::integer(n);
       }},
      {"copy", [](const Value& l, CallArgs& a) { ArgBinder("copy", a, {}); return Value::list(l.as_list(), l.is_tuple()); }},
  };
  return m;
}

Value dict_items_list(const Value& d, int which) {
  std::vector<Value> out;
  for (const auto& kv : d.as_dict().items()) {
    if (which == 0) {
      out.push_back(Value::list({kv.first, kv.second}, true));
    } else {
      out.push_back(which == 1 ? kv.first : kv.second);
    }
  }
  return Value::list(std::move(out));
}

const std::unordered_map<std::string, Method>& dict_methods() {
  static const std::unordered_map<std::string, Method> m = {
      {"items", [](const Value& d, CallArgs& a) { ArgBinder("items", a, {}); return dict_items_list(d, 0); }},
      {"keys", [](const Value& d, CallArgs& a) { ArgBinder("keys", a, {}); return dict_items_list(d, 1); }},
      {"values", [](const Value& d, CallArgs& a) { ArgBinder("values", a, {}); return dict_items_list(d, 2); }},
      {"get",
       [](const Value& d, CallArgs& a) {
         ArgBinder b("get", a, {"key", "default"});
         if (!b.find(0)) throw Error("get expected at least 1 argument, got 0");
         const Value* v = d.as_dict().find(*b.find(0));
         return v ? *v : b.get_or(1, Value::none());
       }},
      {"copy", [](const Value& d, CallArgs& a) { ArgBinder("copy", a, {}); return Value::dict(d.as_dict()); }},
  };
  return m;
}

// Methods Python has but this interpreter does not implement or the sandbox refuses.
bool is_unsafe(const Value& obj, const std::string& name) {
  static const std::unordered_set<std::string> list_mutators = {"append", "clear", "extend", "insert",
                                                                "pop",    "remove", "reverse", "sort"};
  static const std::unordered_set<std::string> dict_mutators = {"clear", "pop", "popitem", "setdefault", "update"};
  if (obj.is_list() && !obj.is_tuple()) return list_mutators.count(name) > 0;
  if (obj.is_dict()) return dict_mutators.count(name) > 0;
  return false;
}

bool is_unimplemented(const Value& obj, const std::string& name) {
  static const std::unordered_set<std::string> str_other = {"format_map", "encode", "expandtabs", "istitle",
                                                            "isidentifier", "isprintable", "isascii", "maketrans",
                                                            "translate", "zfill"};
  static const std::unordered_set<std::string> dict_other = {"fromkeys"};
  if (obj.is_string()) return str_other.count(name) > 0;
  if (obj.is_dict()) return dict_other.count(name) > 0;
  return false;
}

}  // namespace

std::optional<Value> bound_method(const Value& obj, const std::string& name) {
  const std::unordered_map<std::string, Method>* table = nullptr;
  if (obj.is_string()) table = &str_methods();
  if (obj.is_list()) table = &list_methods();
  if (obj.is_dict()) table = &dict_methods();
  if (!table) return std::nullopt;
  if (obj.is_tuple() && name == "copy") return std::nullopt;
  const auto it = table->find(name);
  if (it != table->end()) {
    const Method method = it->second;
    return Value::callable(type_name(obj) + "." + name, [obj, method](CallArgs& args) { return method(obj, args); });
  }
  if (is_unsafe(obj, name)) {
    return Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe.");
  }
  if (is_unimplemented(obj, name)) {
    const std::string full = type_name(obj) + "." + name;
    return Value::callable(full, [full](CallArgs&) -> Value { throw Error(full + "() is not supported"); });
  }
  return std::nullopt;
}

}  // namespace db::chat

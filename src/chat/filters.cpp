#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "chat/builtins.h"
#include "chat/methods.h"
#include "chat/operators.h"
#include "chat/text.h"
#include "chat/value_format.h"
#include "util/error.h"

namespace db::chat {

namespace {

// jinja2's ignore_case postprocessing for sort/min/max/unique keys.
Value fold_case(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(text::lower(v.as_string()));
  return v;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

bool parse_python_int(std::string s, int base, int64_t& out) {
  s = text::strip(s, std::nullopt, true, true);
  std::string clean;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 >= s.size() || s[i - 1] == '_') return false;
      continue;
    }
    clean.push_back(s[i]);
  }
  if (clean.empty()) return false;
  size_t start = (clean[0] == '+' || clean[0] == '-') ? 1 : 0;
  if (base == 16 && clean.size() > start + 1 && clean[start] == '0' && (clean[start + 1] | 0x20) == 'x') start += 2;
  if (base == 8 && clean.size() > start + 1 && clean[start] == '0' && (clean[start + 1] | 0x20) == 'o') start += 2;
  if (base == 2 && clean.size() > start + 1 && clean[start] == '0' && (clean[start + 1] | 0x20) == 'b') start += 2;
  if (start >= clean.size()) return false;
  const std::string digits = (clean[0] == '-' ? "-" : "") + clean.substr(start);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(digits.c_str(), &end, base);
  if (*end != '\0' || errno == ERANGE) return false;
  out = v;
  return true;
}

bool parse_python_float(const std::string& raw, double& out) {
  std::string s = text::strip(raw, std::nullopt, true, true);
  std::string clean;
  for (char c : s) {
    if (c != '_') clean.push_back(c);
  }
  if (clean.empty()) return false;
  std::string lower = text::lower(clean);
  const std::string body = (lower[0] == '+' || lower[0] == '-') ? lower.substr(1) : lower;
  if (body == "inf" || body == "infinity" || body == "nan") {
    out = body == "nan" ? std::nan("") : (lower[0] == '-' ? -INFINITY : INFINITY);
    return true;
  }
  if (body.find_first_not_of("0123456789.e+-") != std::string::npos) return false;
  char* end = nullptr;
  out = std::strtod(clean.c_str(), &end);
  return *end == '\0';
}

Value f_abs(const Value& v, CallArgs& args) {
  ArgBinder("abs", args, {});
  if (v.is_float()) return Value::number(std::fabs(v.as_double()));
  if (v.is_int() || v.is_bool()) {
    if (v.as_int() == INT64_MIN) throw Error("integer overflow");
    return Value::integer(std::llabs(v.as_int()));
  }
  if (v.is_undefined()) ops::fail_undefined(v);
  throw Error("bad operand type for abs(): '" + type_name(v) + "'");
}

Value f_attr(const Value& v, CallArgs& args) {
  ArgBinder b("attr", args, {"name"});
  const Value name = b.get_or(0, Value::string(""));
  if (!name.is_string()) throw Error("attribute name must be string");
  if (v.is_undefined()) ops::fail_undefined(v);
  if (v.is_object()) {
    const Value* a = v.as_object().attributes.find(std::string_view(name.as_string()));
    if (a) return *a;
  } else if (auto m = bound_method(v, name.as_string())) {
    return *m;
  }
  return Value::undefined("'" + ops::object_type_repr(v) + "' has no attribute '" + name.as_string() + "'");
}

Value f_batch(const Value& v, CallArgs& args) {
  ArgBinder b("batch", args, {"linecount", "fill_with"});
  const Value count = b.get_or(0, Value::integer(1));
  if (!count.is_int() || count.as_int() <= 0) throw Error("batch() linecount must be a positive integer");
  const Value fill = b.get_or(1, Value::none());
  std::vector<Value> out, tmp;
  for (const Value& item : iterate(v)) {
    if (static_cast<int64_t>(tmp.size()) == count.as_int()) {
      out.push_back(Value::list(std::move(tmp)));
      tmp.clear();
    }
    tmp.push_back(item);
  }
  if (!tmp.empty()) {
    if (!fill.is_none()) {
      while (static_cast<int64_t>(tmp.size()) < count.as_int()) tmp.push_back(fill);
    }
    out.push_back(Value::list(std::move(tmp)));
  }
  return Value::list(std::move(out));
}

Value f_capitalize(const Value& v, CallArgs& args) {
  ArgBinder("capitalize", args, {});
  return Value::string(text::capitalize(to_str(v)));
}

Value f_center(const Value& v, CallArgs& args) {
  ArgBinder b("center", args, {"width"});
  CallArgs inner;
  inner.positional.push_back(b.get_or(0, Value::integer(80)));
  return (*bound_method(Value::string(to_str(v)), "center")).as_callable().call(inner);
}

Value f_length(const Value& v, CallArgs& args) {
  ArgBinder("length", args, {});
  return Value::integer(length(v));
}

Value f_default(const Value& v, CallArgs& args) {
  ArgBinder b("default", args, {"default_value", "boolean"});
  const Value fallback = b.get_or(0, Value::string(""));
  const bool boolean = truthy(b.get_or(1, Value::boolean(false)));
  if (v.is_undefined() || (boolean && !truthy(v))) return fallback;
  return v;
}

Value f_dictsort(const Value& v, CallArgs& args) {
  ArgBinder b("dictsort", args, {"case_sensitive", "by", "reverse"});
  const bool case_sensitive = truthy(b.get_or(0, Value::boolean(false)));
  const Value by = b.get_or(1, Value::string("key"));
  const bool reverse = truthy(b.get_or(2, Value::boolean(false)));
  if (!by.is_string() || (by.as_string() != "key" && by.as_string() != "value")) {
    throw Error("You can only sort by either \"key\" or \"value\"");
  }
  if (!v.is_dict()) throw Error("dictsort() requires a mapping");
  const size_t pos = by.as_string() == "key" ? 0 : 1;
  std::vector<Value> items;
  for (const auto& kv : v.as_dict().items()) items.push_back(Value::list({kv.first, kv.second}, true));
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& c) {
    const Value ka = fold_case(a.as_list()[pos], case_sensitive), kc = fold_case(c.as_list()[pos], case_sensitive);
    return reverse ? less_than(kc, ka) : less_than(ka, kc);
  });
  return Value::list(std::move(items));
}

Value f_escape(const Value& v, CallArgs& args) {
  ArgBinder("escape", args, {});
  return Value::string(html_escape(to_str(v)));
}

Value f_first(const Value& v, CallArgs& args) {
  ArgBinder("first", args, {});
  const std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Value f_last(const Value& v, CallArgs& args) {
  ArgBinder("last", args, {});
  const std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Value f_float(const Value& v, CallArgs& args) {
  ArgBinder b("float", args, {"default"});
  const Value fallback = b.get_or(0, Value::number(0.0));
  if (v.is_float()) return v;
  if (v.is_int() || v.is_bool()) return Value::number(v.as_double());
  if (v.is_undefined()) ops::fail_undefined(v);
  double d = 0;
  if (v.is_string() && parse_python_float(v.as_string(), d)) return Value::number(d);
  return fallback;
}

Value f_int(const Value& v, CallArgs& args) {
  ArgBinder b("int", args, {"default", "base"});
  const Value fallback = b.get_or(0, Value::integer(0));
  const Value base = b.get_or(1, Value::integer(10));
  if (v.is_int() || v.is_bool()) return Value::integer(v.as_int());
  if (v.is_float()) {
    const double d = v.as_double();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value::integer(static_cast<int64_t>(d));
  }
  if (v.is_undefined()) ops::fail_undefined(v);
  if (!v.is_string()) return fallback;
  const int64_t base_value = base.is_int() ? base.as_int() : 10;
  if (base_value != 0 && (base_value < 2 || base_value > 36)) return fallback;
  int64_t i = 0;
  if (parse_python_int(v.as_string(), static_cast<int>(base_value), i)) return Value::integer(i);
  double d = 0;
  if (parse_python_float(v.as_string(), d) && std::isfinite(d) && std::fabs(d) < 9.2e18) {
    return Value::integer(static_cast<int64_t>(d));
  }
  return fallback;
}

Value f_indent(const Value& v, CallArgs& args) {
  ArgBinder b("indent", args, {"width", "first", "blank"});
  const Value width = b.get_or(0, Value::integer(4));
  const bool first = truthy(b.get_or(1, Value::boolean(false)));
  const bool blank = truthy(b.get_or(2, Value::boolean(false)));
  if (!v.is_string()) throw Error("indent() requires a string, got " + type_name(v));
  std::string indention;
  if (width.is_string()) {
    indention = width.as_string();
  } else {
    for (int64_t i = 0; i < width.as_int(); ++i) indention += ' ';
  }
  const std::vector<std::string> lines = text::splitlines(v.as_string() + "\n");
  std::string rv;
  if (blank) {
    for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + indention : "") + lines[i];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : indention + lines[i]);
  }
  if (first) rv = indention + rv;
  return Value::string(std::move(rv));
}

Value f_items(const Value& v, CallArgs& args) {
  ArgBinder("items", args, {});
  if (v.is_undefined()) return Value::list({});
  if (!v.is_dict()) throw Error("Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (const auto& kv : v.as_dict().items()) out.push_back(Value::list({kv.first, kv.second}, true));
  return Value::list(std::move(out));
}

Value f_join(const Value& v, CallArgs& args) {
  ArgBinder b("join", args, {"d", "attribute"});
  const std::string sep = to_str(b.get_or(0, Value::string("")));
  const Value attribute = b.get_or(1, Value::none());
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += to_str(attribute.is_none() ? item : get_attribute_path(item, attribute));
  }
  return Value::string(std::move(out));
}

Value f_list(const Value& v, CallArgs& args) {
  ArgBinder("list", args, {});
  return Value::list(iterate(v));
}

Value f_lower(const Value& v, CallArgs& args) {
  ArgBinder("lower", args, {});
  return Value::string(text::lower(to_str(v)));
}

Value f_upper(const Value& v, CallArgs& args) {
  ArgBinder("upper", args, {});
  return Value::string(text::upper(to_str(v)));
}

Value f_map(const Value& v, CallArgs& args) {
  std::vector<Value> out;
  if (args.positional.empty() && !args.keywords.empty()) {
    ArgBinder b("map", args, {"attribute", "default"});
    const Value attribute = b.get_or(0, Value::none());
    const Value fallback = b.get_or(1, Value::none());
    for (const Value& item : iterate(v)) {
      Value got = get_attribute_path(item, attribute);
      if (got.is_undefined() && !fallback.is_none()) got = fallback;
      out.push_back(std::move(got));
    }
    return Value::list(std::move(out));
  }
  if (args.positional.empty()) throw Error("map requires a filter argument");
  const Value name = args.positional[0];
  if (!name.is_string()) throw Error("map filter name must be a string");
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keywords = args.keywords;
  for (const Value& item : iterate(v)) {
    CallArgs call = rest;
    out.push_back(call_filter(name.as_string(), item, call));
  }
  return Value::list(std::move(out));
}

Value min_or_max(const char* fn, const Value& v, CallArgs& args, bool want_max) {
  ArgBinder b(fn, args, {"case_sensitive", "attribute"});
  const bool case_sensitive = truthy(b.get_or(0, Value::boolean(false)));
  const Value attribute = b.get_or(1, Value::none());
  const std::vector<Value> items = iterate(v);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key = fold_case(get_attribute_path(items[0], attribute), case_sensitive);
  for (size_t i = 1; i < items.size(); ++i) {
    Value key = fold_case(get_attribute_path(items[i], attribute), case_sensitive);
    if (want_max ? less_than(best_key, key) : less_than(key, best_key)) {
      best = i;
      best_key = std::move(key);
    }
  }
  return items[best];
}

Value f_max(const Value& v, CallArgs& args) { return min_or_max("max", v, args, true); }
Value f_min(const Value& v, CallArgs& args) { return min_or_max("min", v, args, false); }

// select / reject / selectattr / rejectattr.
Value select_or_reject(const Value& v, CallArgs& args, bool keep_matching, bool lookup_attr) {
  std::vector<Value> out;
  if (!truthy(v)) return Value::list({});
  size_t off = 0;
  Value attribute;
  if (lookup_attr) {
    if (args.positional.empty()) throw Error("Missing parameter for attribute name");
    attribute = args.positional[0];
    off = 1;
  }
  const bool has_test = args.positional.size() > off;
  std::string test_name;
  CallArgs test_args;
  if (has_test) {
    if (!args.positional[off].is_string()) throw Error("test name must be a string");
    test_name = args.positional[off].as_string();
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(off) + 1, args.positional.end());
    test_args.keywords = args.keywords;
  }
  for (const Value& item : iterate(v)) {
    const Value subject = lookup_attr ? get_attribute_path(item, attribute) : item;
    bool ok = false;
    if (has_test) {
      CallArgs call = test_args;
      ok = call_test(test_name, subject, call);
    } else {
      ok = truthy(subject);
    }
    if (ok == keep_matching) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value f_select(const Value& v, CallArgs& a) { return select_or_reject(v, a, true, false); }
Value f_reject(const Value& v, CallArgs& a) { return select_or_reject(v, a, false, false); }
Value f_selectattr(const Value& v, CallArgs& a) { return select_or_reject(v, a, true, true); }
Value f_rejectattr(const Value& v, CallArgs& a) { return select_or_reject(v, a, false, true); }

Value f_replace(const Value& v, CallArgs& args) {
  ArgBinder b("replace", args, {"old", "new", "count"});
  if (!b.find(0) || !b.find(1)) throw Error("replace() missing required arguments 'old' and 'new'");
  const Value count = b.get_or(2, Value::none());
  return Value::string(text::replace(to_str(v), to_str(*b.find(0)), to_str(*b.find(1)),
                                     count.is_none() ? -1 : count.as_int()));
}

Value f_reverse(const Value& v, CallArgs& args) {
  ArgBinder("reverse", args, {});
  if (v.is_string()) {
    std::u32string cps = text::decode(v.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value::string(text::encode(cps));
  }
  std::vector<Value> items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}

Value f_round(const Value& v, CallArgs& args) {
  ArgBinder b("round", args, {"precision", "method"});
  const int64_t precision = b.get_or(0, Value::integer(0)).as_int();
  const Value method = b.get_or(1, Value::string("common"));
  if (!method.is_string() || (method.as_string() != "common" && method.as_string() != "ceil" &&
                              method.as_string() != "floor")) {
    throw Error("method must be common, ceil or floor");
  }
  if (v.is_undefined()) ops::fail_undefined(v);
  if (!v.is_number()) throw Error("type " + type_name(v) + " doesn't define __round__ method");
  if (method.as_string() == "common") {
    if (!v.is_float() && precision >= 0) return Value::integer(v.as_int());
    if (precision < 0 || precision > 300) throw Error("round() precision out of supported range");
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), v.as_double());
    return Value::number(std::strtod(buf, nullptr));
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = v.as_double() * scale;
  return Value::number((method.as_string() == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
}

Value f_safe(const Value& v, CallArgs& args) {
  ArgBinder("safe", args, {});
  return v;
}

Value f_sort(const Value& v, CallArgs& args) {
  ArgBinder b("sort", args, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = truthy(b.get_or(0, Value::boolean(false)));
  const bool case_sensitive = truthy(b.get_or(1, Value::boolean(false)));
  const Value attribute = b.get_or(2, Value::none());
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value& item : iterate(v)) {
    keyed.emplace_back(fold_case(get_attribute_path(item, attribute), case_sensitive), item);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [reverse](const auto& a, const auto& c) {
    return reverse ? less_than(c.first, a.first) : less_than(a.first, c.first);
  });
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return Value::list(std::move(out));
}

Value f_string(const Value& v, CallArgs& args) {
  ArgBinder("string", args, {});
  return Value::string(to_str(v));
}

Value f_sum(const Value& v, CallArgs& args) {
  ArgBinder b("sum", args, {"attribute", "start"});
  const Value attribute = b.get_or(0, Value::none());
  Value total = b.get_or(1, Value::integer(0));
  for (const Value& item : iterate(v)) total = ops::add(total, get_attribute_path(item, attribute));
  return total;
}

Value f_title(const Value& v, CallArgs& args) {
  ArgBinder("title", args, {});
  // Words start after runs of '-', whitespace, '(', '{', '[' or '<'.
  std::string out;
  bool word_start = true;
  for (char32_t c : text::decode(to_str(v))) {
    const bool delimiter = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || text::is_space(c);
    if (delimiter) {
      text::append(out, c);
      word_start = true;
    } else if (word_start) {
      out += text::upper(text::encode(std::u32string(1, c)));
      word_start = false;
    } else {
      text::append(out, text::to_lower(c));
    }
  }
  return Value::string(std::move(out));
}

Value f_tojson(const Value& v, CallArgs& args) {
  ArgBinder b("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions o;
  o.ensure_ascii = truthy(b.get_or(0, Value::boolean(false)));
  const Value indent = b.get_or(1, Value::none());
  if (indent.is_string()) {
    o.indent = indent.as_string();
  } else if (indent.is_int()) {
    o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.as_int())), ' ');
  } else if (!indent.is_none()) {
    throw Error("tojson indent must be an int, a string or None");
  }
  if (o.indent) o.item_separator = ",";
  const Value separators = b.get_or(2, Value::none());
  if (separators.is_list() && separators.as_list().size() == 2 && separators.as_list()[0].is_string() &&
      separators.as_list()[1].is_string()) {
    o.item_separator = separators.as_list()[0].as_string();
    o.key_separator = separators.as_list()[1].as_string();
  } else if (!separators.is_none()) {
    throw Error("tojson separators must be a pair of strings");
  }
  o.sort_keys = truthy(b.get_or(3, Value::boolean(false)));
  return Value::string(to_json(v, o));
}

Value f_trim(const Value& v, CallArgs& args) {
  ArgBinder b("trim", args, {"chars"});
  const Value chars = b.get_or(0, Value::none());
  std::optional<std::string> set;
  if (!chars.is_none()) set = to_str(chars);
  return Value::string(text::strip(to_str(v), set, true, true));
}

Value f_unique(const Value& v, CallArgs& args) {
  ArgBinder b("unique", args, {"case_sensitive", "attribute"});
  const bool case_sensitive = truthy(b.get_or(0, Value::boolean(false)));
  const Value attribute = b.get_or(1, Value::none());
  std::vector<Value> seen, out;
  for (const Value& item : iterate(v)) {
    const Value key = fold_case(get_attribute_path(item, attribute), case_sensitive);
    bool dup = false;
    for (const auto& s : seen) dup = dup || equals(s, key);
    if (!dup) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::list(std::move(out));
}

Value f_wordcount(const Value& v, CallArgs& args) {
  ArgBinder("wordcount", args, {});
  int64_t n = 0;
  bool in_word = false;
  for (char32_t c : text::decode(to_str(v))) {
    const bool word = c == '_' || (c >= '0' && c <= '9') || text::is_alpha(c) || (c >= 0x80 && !text::is_space(c) && text::is_printable(c));
    if (word && !in_word) ++n;
    in_word = word;
  }
  return Value::integer(n);
}

const std::unordered_map<std::string, FilterFunction>& filter_table() {
  static const std::unordered_map<std::string, FilterFunction> table = {
      {"abs", f_abs},           {"attr", f_attr},         {"batch", f_batch},
      {"capitalize", f_capitalize}, {"center", f_center}, {"count", f_length},
      {"d", f_default},         {"default", f_default},   {"dictsort", f_dictsort},
      {"e", f_escape},          {"escape", f_escape},     {"forceescape", f_escape},
      {"first", f_first},       {"float", f_float},       {"indent", f_indent},
      {"int", f_int},           {"items", f_items},       {"join", f_join},
      {"last", f_last},         {"length", f_length},     {"list", f_list},
      {"lower", f_lower},       {"map", f_map},           {"max", f_max},
      {"min", f_min},           {"reject", f_reject},     {"rejectattr", f_rejectattr},
      {"replace", f_replace},   {"reverse", f_reverse},   {"round", f_round},
      {"safe", f_safe},         {"select", f_select},     {"selectattr", f_selectattr},
      {"sort", f_sort},         {"string", f_string},     {"sum", f_sum},
      {"title", f_title},       {"tojson", f_tojson},     {"trim", f_trim},
      {"unique", f_unique},     {"upper", f_upper},       {"wordcount", f_wordcount},
  };
  return table;
}

}  // namespace

FilterFunction find_filter(const std::string& name) {
  const auto& t = filter_table();
  const auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

Value call_filter(const std::string& name, const Value& input, CallArgs& args) {
  const FilterFunction f = find_filter(name);
  if (!f) throw Error("no filter named '" + name + "'");
  return f(input, args);
}

}  // namespace db::chat

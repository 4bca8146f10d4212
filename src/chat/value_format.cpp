#include "chat/value_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/text.h"
#include "util/error.h"

namespace db::chat {

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  DB_CHECK(res.ec == std::errc(), "to_chars failed");
  const std::string sci(buf, res.ptr);
  const size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  const bool negative = !mantissa.empty() && mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa) {
    if (c >= '0' && c <= '9') digits.push_back(c);
  }
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      const size_t int_len = static_cast<size_t>(exponent) + 1;
      if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
      out += digits.substr(0, int_len);
      out += '.';
      out += digits.size() > int_len ? digits.substr(int_len) : "0";
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out += digits;
    }
    return out;
  }
  out += digits[0];
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  out += exp_buf;
  return out;
}

namespace {

std::string hex_escape(const char* prefix, unsigned value, int width) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%s%0*x", prefix, width, value);
  return buf;
}

std::string repr_string(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : text::decode(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (!text::is_printable(c)) {
      if (c < 0x100) {
        out += hex_escape("\\x", c, 2);
      } else if (c < 0x10000) {
        out += hex_escape("\\u", c, 4);
      } else {
        out += hex_escape("\\U", c, 8);
      }
    } else {
      text::append(out, c);
    }
  }
  out += quote;
  return out;
}

std::string repr_dict_items(const DictData& d) {
  std::string out = "{";
  bool first = true;
  for (const auto& kv : d.items()) {
    if (!first) out += ", ";
    first = false;
    out += repr(kv.first) + ": " + repr(kv.second);
  }
  return out + "}";
}

}  // namespace

std::string repr(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "None";
    case Kind::Bool: return v.as_bool() ? "True" : "False";
    case Kind::Int: return std::to_string(v.as_int());
    case Kind::Float: return float_repr(v.as_double());
    case Kind::String: return repr_string(v.as_string());
    case Kind::List: {
      const auto& items = v.as_list();
      std::string out = v.is_tuple() ? "(" : "[";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += repr(items[i]);
      }
      if (v.is_tuple() && items.size() == 1) out += ",";
      return out + (v.is_tuple() ? ")" : "]");
    }
    case Kind::Dict: return repr_dict_items(v.as_dict());
    case Kind::Object: {
      const ObjectData& obj = v.as_object();
      if (obj.is_namespace) return "<Namespace " + repr_dict_items(obj.attributes) + ">";
      return "<" + obj.type_name + ">";
    }
    case Kind::Callable: return "<function " + v.as_callable().name + ">";
  }
  return "";
}

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case Kind::Undefined: return "";
    case Kind::String: return v.as_string();
    default: return repr(v);
  }
}

namespace {

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  for (char32_t c : text::decode(s)) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += hex_escape("\\u", c, 4);
        } else if (ensure_ascii && c >= 0x80) {
          if (c >= 0x10000) {
            const char32_t v = c - 0x10000;
            out += hex_escape("\\u", 0xD800 | (v >> 10), 4);
            out += hex_escape("\\u", 0xDC00 | (v & 0x3FF), 4);
          } else {
            out += hex_escape("\\u", c, 4);
          }
        } else {
          text::append(out, c);
        }
    }
  }
  out += '"';
}

std::string json_float(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
  return float_repr(d);
}

std::string json_key(const Value& k) {
  switch (k.kind()) {
    case Kind::String: return k.as_string();
    case Kind::Bool: return k.as_bool() ? "true" : "false";
    case Kind::None: return "null";
    case Kind::Int: return std::to_string(k.as_int());
    case Kind::Float: return json_float(k.as_double());
    default: throw Error("keys must be str, int, float, bool or None, not " + type_name(k));
  }
}

void newline_indent(std::string& out, const JsonOptions& o, int level) {
  out += '\n';
  for (int i = 0; i < level; ++i) out += *o.indent;
}

void dump(std::string& out, const Value& v, const JsonOptions& o, int level) {
  switch (v.kind()) {
    case Kind::None: out += "null"; return;
    case Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Kind::Int: out += std::to_string(v.as_int()); return;
    case Kind::Float: out += json_float(v.as_double()); return;
    case Kind::String: json_string(out, v.as_string(), o.ensure_ascii); return;
    case Kind::List: {
      const auto& items = v.as_list();
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += o.item_separator;
        if (o.indent) newline_indent(out, o, level + 1);
        dump(out, items[i], o, level + 1);
      }
      if (o.indent) newline_indent(out, o, level);
      out += ']';
      return;
    }
    case Kind::Dict: {
      std::vector<std::pair<std::string, const Value*>> entries;
      for (const auto& kv : v.as_dict().items()) entries.emplace_back(json_key(kv.first), &kv.second);
      if (o.sort_keys) {
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      if (entries.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += o.item_separator;
        if (o.indent) newline_indent(out, o, level + 1);
        json_string(out, entries[i].first, o.ensure_ascii);
        out += o.key_separator;
        dump(out, *entries[i].second, o, level + 1);
      }
      if (o.indent) newline_indent(out, o, level);
      out += '}';
      return;
    }
    default: throw Error("Object of type " + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

std::string to_json(const Value& v, const JsonOptions& options) {
  std::string out;
  dump(out, v, options, 0);
  return out;
}

}  // namespace db::chat

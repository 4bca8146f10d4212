#include "chat/string_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/text.h"
#include "chat/value_format.h"
#include "util/error.h"

namespace db::chat {

namespace {

struct Spec {
  char fill = ' ';
  char align = 0;      // '<', '>', '^', '=' or 0 (type default)
  char sign = '-';     // '-', '+' or ' '
  bool zero = false;   // '0' flag: pad numbers with zeros after the sign
  int width = -1;      // minimum width in characters
  int precision = -1;  // digits after the point / max string length
  char type = 0;       // conversion character
};

std::string pad(const std::string& body, const Spec& s, bool numeric) {
  const auto len = static_cast<int>(text::length(body));
  if (s.width <= len) return body;
  const int n = s.width - len;
  char align = s.align ? s.align : (numeric ? '>' : '<');
  if (numeric && s.zero && !s.align) {
    const size_t sign_len = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
    return body.substr(0, sign_len) + std::string(static_cast<size_t>(n), '0') + body.substr(sign_len);
  }
  const std::string fill(static_cast<size_t>(n), s.fill);
  if (align == '<') return body + fill;
  if (align == '^') return std::string(fill, 0, static_cast<size_t>(n / 2)) + body + std::string(fill, 0, static_cast<size_t>(n - n / 2));
  return fill + body;
}

std::string with_sign(const std::string& digits, bool negative, char sign) {
  if (negative) return "-" + digits;
  if (sign == '+') return "+" + digits;
  if (sign == ' ') return " " + digits;
  return digits;
}

std::string format_int(int64_t v, char type, char sign) {
  const bool negative = v < 0;
  const uint64_t mag = negative ? static_cast<uint64_t>(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char buf[80];
  const char* f = type == 'x' ? "%llx" : type == 'X' ? "%llX" : type == 'o' ? "%llo" : "%llu";
  std::snprintf(buf, sizeof(buf), f, static_cast<unsigned long long>(mag));
  return with_sign(buf, negative, sign);
}

std::string format_float(double v, char type, int precision, char sign) {
  char buf[512];
  const char fmt[] = {'%', '.', '*', type, 0};
  std::snprintf(buf, sizeof(buf), fmt, precision < 0 ? 6 : std::min(precision, 300), v < 0 ? -v : v);
  return with_sign(buf, std::signbit(v), sign);
}

std::string convert(const Value& v, const Spec& s, const char* context) {
  switch (s.type) {
    case 's':
    case 'r':
    case 'a': {
      std::string body = s.type == 's' ? to_str(v) : repr(v);
      if (s.precision >= 0) body = text::encode(text::decode(body).substr(0, static_cast<size_t>(s.precision)));
      return pad(body, s, false);
    }
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      if (!v.is_number()) throw Error(std::string(context) + ": a real number is required, not " + type_name(v));
      if (v.is_float() && !(std::fabs(v.as_double()) < 9.2e18)) throw Error("cannot convert float to a 64-bit integer");
      const int64_t i = v.is_float() ? static_cast<int64_t>(v.as_double()) : v.as_int();
      return pad(format_int(i, s.type, s.sign), s, true);
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      if (!v.is_number()) throw Error(std::string(context) + ": must be real number, not " + type_name(v));
      return pad(format_float(v.as_double(), s.type, s.precision, s.sign), s, true);
    }
    default: throw Error(std::string("unsupported format character '") + s.type + "'");
  }
}

int read_number(const std::string& f, size_t& i) {
  int n = 0;
  while (i < f.size() && f[i] >= '0' && f[i] <= '9') n = n * 10 + (f[i++] - '0');
  return n;
}

}  // namespace

std::string percent_format(const std::string& fmt, const Value& args) {
  std::vector<Value> positional;
  const bool is_tuple = args.is_tuple();
  if (is_tuple) {
    positional = args.as_list();
  } else if (!args.is_dict()) {
    positional.push_back(args);
  }
  size_t next = 0;
  bool used_mapping = false;
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) throw Error("incomplete format");
    if (fmt[i] == '%') {
      out.push_back('%');
      continue;
    }
    const Value* arg = nullptr;
    if (fmt[i] == '(') {
      const size_t close = fmt.find(')', i);
      if (close == std::string::npos) throw Error("incomplete format key");
      if (!args.is_dict()) throw Error("format requires a mapping");
      arg = args.as_dict().find(std::string_view(fmt).substr(i + 1, close - i - 1));
      if (!arg) throw Error("KeyError: '" + fmt.substr(i + 1, close - i - 1) + "'");
      used_mapping = true;
      i = close + 1;
    }
    Spec s;
    for (; i < fmt.size() && std::string_view("-+ 0#").find(fmt[i]) != std::string_view::npos; ++i) {
      if (fmt[i] == '-') s.align = '<';
      if (fmt[i] == '+' || (fmt[i] == ' ' && s.sign != '+')) s.sign = fmt[i];
      if (fmt[i] == '0') s.zero = true;
    }
    if (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') s.width = read_number(fmt, i);
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      s.precision = read_number(fmt, i);
    }
    while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= fmt.size()) throw Error("incomplete format");
    s.type = fmt[i];
    if (s.align == '<') s.zero = false;
    if (!arg) {
      if (next >= positional.size()) throw Error("not enough arguments for format string");
      arg = &positional[next++];
    }
    out += convert(*arg, s, ("%" + std::string(1, s.type) + " format").c_str());
  }
  if (!used_mapping && !args.is_dict() && next < positional.size()) {
    throw Error("not all arguments converted during string formatting");
  }
  return out;
}

namespace {

// "[[fill]align][sign][0][width][.precision][type]" of str.format.
Spec parse_format_spec(const std::string& text) {
  Spec s;
  size_t p = 0;
  if (text.size() >= 2 && std::string_view("<>^=").find(text[1]) != std::string_view::npos) {
    s.fill = text[0];
    s.align = text[1];
    p = 2;
  } else if (!text.empty() && std::string_view("<>^=").find(text[0]) != std::string_view::npos) {
    s.align = text[0];
    p = 1;
  }
  if (p < text.size() && (text[p] == '+' || text[p] == '-' || text[p] == ' ')) s.sign = text[p++];
  if (p < text.size() && text[p] == '0') {
    s.zero = true;
    ++p;
  }
  if (p < text.size() && text[p] >= '0' && text[p] <= '9') s.width = read_number(text, p);
  if (p < text.size() && text[p] == '.') {
    ++p;
    s.precision = read_number(text, p);
  }
  if (p < text.size()) s.type = text[p++];
  if (p != text.size()) throw Error("Invalid format specifier '" + text + "'");
  return s;
}

// One replacement field "name!conv:spec" (without braces) of str.format.
std::string format_field(std::string field, const CallArgs& args, size_t& auto_index) {
  std::string spec_text;
  if (const size_t colon = field.find(':'); colon != std::string::npos) {
    spec_text = field.substr(colon + 1);
    field.resize(colon);
  }
  char conversion = 0;
  if (const size_t bang = field.find('!'); bang != std::string::npos) {
    if (bang + 2 != field.size()) throw Error("expected ':' after conversion specifier");
    conversion = field[bang + 1];
    field.resize(bang);
  }
  const Value* arg = nullptr;
  if (field.empty() || field.find_first_not_of("0123456789") == std::string::npos) {
    const size_t index = field.empty() ? auto_index++ : static_cast<size_t>(std::stoul(field));
    if (index >= args.positional.size()) {
      throw Error("Replacement index " + std::to_string(index) + " out of range for positional args tuple");
    }
    arg = &args.positional[index];
  } else {
    for (const auto& kw : args.keywords) {
      if (kw.first == field) arg = &kw.second;
    }
    if (!arg) throw Error("KeyError: '" + field + "'");
  }
  Value value = *arg;
  if (conversion == 'r' || conversion == 'a') value = Value::string(repr(value));
  if (conversion == 's') value = Value::string(to_str(value));
  Spec s = parse_format_spec(spec_text);
  if (!s.type) {
    if (value.is_float() && s.precision < 0) return pad(float_repr(value.as_double()), s, true);
    s.type = value.is_float() ? 'g' : (value.is_int() ? 'd' : 's');
  }
  if (s.type == 's' && !value.is_string()) {
    if (value.is_number()) throw Error("Unknown format code 's' for object of type '" + type_name(value) + "'");
    value = Value::string(to_str(value));
  }
  return convert(value, s, "format");
}

}  // namespace

std::string brace_format(const std::string& fmt, const CallArgs& args) {
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    const char c = fmt[i];
    const bool doubled = i + 1 < fmt.size() && fmt[i + 1] == c;
    if ((c == '{' || c == '}') && doubled) {
      out.push_back(c);
      ++i;
    } else if (c == '}') {
      throw Error("Single '}' encountered in format string");
    } else if (c == '{') {
      const size_t close = fmt.find('}', i);
      if (close == std::string::npos) throw Error("expected '}' before end of string");
      out += format_field(fmt.substr(i + 1, close - i - 1), args, auto_index);
      i = close;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace db::chat

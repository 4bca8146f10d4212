#include "api/json_fields.h"

#include <cmath>
#include <sstream>

#include "api/api_error.h"

namespace db::api {

namespace {

std::string name_of(const char* key, const std::string& param) { return param.empty() ? std::string(key) : param; }

[[noreturn]] void wrong_type(const std::string& param, const char* expected, const Json& got) {
  throw ApiError("'" + param + "' must be " + expected + ", got " + json_type_name(got), param, "invalid_type");
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

std::string json_type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::string: return "a string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    default: return "an unsupported value";
  }
}

const Json* find_field(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::string> opt_string(const Json& obj, const char* key, const std::string& param) {
  const Json* v = find_field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_string()) wrong_type(name_of(key, param), "a string", *v);
  return v->get<std::string>();
}

std::optional<bool> opt_bool(const Json& obj, const char* key, const std::string& param) {
  const Json* v = find_field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) wrong_type(name_of(key, param), "a boolean", *v);
  return v->get<bool>();
}

std::optional<double> opt_number(const Json& obj, const char* key, const std::string& param) {
  const Json* v = find_field(obj, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) wrong_type(name_of(key, param), "a number", *v);
  const double d = v->get<double>();
  if (!std::isfinite(d)) wrong_type(name_of(key, param), "a finite number", *v);
  return d;
}

std::optional<int64_t> opt_integer(const Json& obj, const char* key, int64_t lo, int64_t hi, const std::string& param) {
  const Json* v = find_field(obj, key);
  if (!v) return std::nullopt;
  const std::string p = name_of(key, param);
  bool in_range = false;
  int64_t i = 0;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(hi) && (lo <= 0 || u >= static_cast<uint64_t>(lo));
    i = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    i = v->get<int64_t>();
    in_range = i >= lo && i <= hi;
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) wrong_type(p, "an integer", *v);
    in_range = d >= static_cast<double>(lo) && d <= static_cast<double>(hi) && std::fabs(d) < 9.0e18;
    if (in_range) i = static_cast<int64_t>(d);
  } else {
    wrong_type(p, "an integer", *v);
  }
  if (!in_range) {
    throw ApiError("'" + p + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                       v->dump(),
                   p, "invalid_value");
  }
  return i;
}

void reject_value(const std::string& param, const char* range, double v) {
  throw ApiError("'" + param + "' must be " + range + ", got " + format_number(v), param, "invalid_value");
}

void check_number_range(double v, double lo, double hi, const std::string& param, const char* range) {
  if (!(v >= lo && v <= hi)) reject_value(param, range, v);
}

}  // namespace db::api

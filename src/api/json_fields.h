// Typed readers of request body fields. A field that is absent or null reads as
// "not given"; a field of the wrong type or out of range throws ApiError naming
// the param (e.g. "temperature", "messages[2].content") and what it must be.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace db::api {

// Objects keep their keys in the order the client wrote them: a JSON schema's
// property order is the order a constrained output writes them in.
using Json = nlohmann::ordered_json;

// "a string", "an integer", "an object", ... for messages about `v`'s type.
std::string json_type_name(const Json& v);

// `obj[key]` unless absent or null. `param` names the field in errors (defaults to key).
const Json* find_field(const Json& obj, const char* key);

std::optional<std::string> opt_string(const Json& obj, const char* key, const std::string& param = "");
std::optional<bool> opt_bool(const Json& obj, const char* key, const std::string& param = "");
// Any JSON number; must be finite.
std::optional<double> opt_number(const Json& obj, const char* key, const std::string& param = "");
// A JSON integer (or a number with no fractional part) within [lo, hi].
std::optional<int64_t> opt_integer(const Json& obj, const char* key, int64_t lo, int64_t hi,
                                   const std::string& param = "");

// Throws ApiError: `param` must be `range` (e.g. "in (0, 1]"), got v.
[[noreturn]] void reject_value(const std::string& param, const char* range, double v);
// Throws ApiError unless lo <= v <= hi (`range` describes it, e.g. "in [0, 2]").
void check_number_range(double v, double lo, double hi, const std::string& param, const char* range);

}  // namespace db::api

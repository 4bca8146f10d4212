#include "server/tenant_registry.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "server/batch_api/atomic_file.h"
#include "util/error.h"

namespace db::server {

namespace {

using Json = nlohmann::json;

constexpr size_t kMaxNameBytes = 128;

// `where` names the offending place ("" for the whole document).
[[noreturn]] void refuse(const std::string& where, const std::string& problem) {
  throw Error(where.empty() ? problem : where + ": " + problem);
}

const char* type_name(const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number_float()) return "a fractional number";
  return v.type_name();
}

// A non-negative integer field, or `fallback` when absent.
int64_t count_field(const Json& obj, const char* key, const std::string& where, int64_t fallback = 0) {
  const auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  const std::string at = where + "." + key;
  if (it->is_number_unsigned()) {
    if (it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) refuse(at, "too large");
    return static_cast<int64_t>(it->get<uint64_t>());
  }
  if (!it->is_number_integer()) refuse(at, std::string("must be a non-negative integer, got ") + type_name(*it));
  if (it->get<int64_t>() < 0) refuse(at, "must not be negative, got " + std::to_string(it->get<int64_t>()));
  return it->get<int64_t>();
}

std::string text_field(const Json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  const std::string at = where + "." + key;
  if (it == obj.end()) refuse(at, "missing (required)");
  if (!it->is_string()) refuse(at, std::string("must be a string, got ") + type_name(*it));
  const std::string& s = it->get_ref<const std::string&>();
  if (s.empty()) refuse(at, "must not be empty");
  return s;
}

// Keys travel in "Authorization: Bearer <key>", whose value is trimmed: a key with
// spaces or control characters could never match.
void check_key_characters(const std::string& key, const std::string& where) {
  const bool printable = std::all_of(key.begin(), key.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (!printable) refuse(where + ".key", "must be printable ASCII without spaces");
}

void check_name_characters(const std::string& name, const std::string& where) {
  const bool printable =
      std::all_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= ' ' && c != 0x7f; });
  if (!printable) refuse(where + ".name", "must not contain control characters");
  if (name.size() > kMaxNameBytes) refuse(where + ".name", "longer than " + std::to_string(kMaxNameBytes) + " bytes");
}

Tenant parse_tenant(const Json& t, const std::string& where) {
  if (!t.is_object()) refuse(where, std::string("must be an object, got ") + type_name(t));
  static const std::set<std::string> kKnown = {"name", "key", "max_priority", "max_concurrent_requests",
                                               "max_tokens_per_minute", "max_queued_batch_requests"};
  for (const auto& [field, value] : t.items())
    if (!kKnown.count(field)) refuse(where, "unknown field '" + field + "'");
  Tenant out;
  out.name = text_field(t, "name", where);
  check_name_characters(out.name, where);
  out.key = text_field(t, "key", where);
  check_key_characters(out.key, where);
  const int64_t max_priority = count_field(t, "max_priority", where, 0);
  if (max_priority > 2) refuse(where + ".max_priority", "must be 0, 1 or 2, got " + std::to_string(max_priority));
  out.max_priority = static_cast<int>(max_priority);
  out.limits.max_concurrent_requests = count_field(t, "max_concurrent_requests", where);
  out.limits.max_tokens_per_minute = count_field(t, "max_tokens_per_minute", where);
  out.limits.max_queued_batch_requests = count_field(t, "max_queued_batch_requests", where);
  return out;
}

}  // namespace

bool equal_constant_time(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

TenantRegistry::TenantRegistry(std::vector<Tenant> tenants) : tenants_(std::move(tenants)) {}

TenantRegistry TenantRegistry::single_key(std::string key) {
  if (key.empty()) return TenantRegistry();
  Tenant t;
  t.key = std::move(key);
  return TenantRegistry({std::move(t)});
}

const Tenant* TenantRegistry::find_by_key(std::string_view key) const {
  // Every key is compared in full; the match is picked with arithmetic, not a branch
  // that would end the loop early.
  size_t found = tenants_.size();
  for (size_t i = 0; i < tenants_.size(); ++i) {
    const size_t match = static_cast<size_t>(equal_constant_time(key, tenants_[i].key));
    found = match * i + (1 - match) * found;
  }
  return found < tenants_.size() ? &tenants_[found] : nullptr;
}

const Tenant* TenantRegistry::find_by_name(std::string_view name) const {
  for (const Tenant& t : tenants_)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<Tenant> parse_tenants(std::string_view json_text) {
  Json doc;
  try {
    doc = Json::parse(json_text.begin(), json_text.end());
  } catch (const Json::parse_error& e) {  // only the position: the parser's message may quote a key
    refuse("", "not valid JSON (syntax error near byte " + std::to_string(e.byte) + ")");
  }
  if (!doc.is_object()) refuse("", std::string("must hold a JSON object, got ") + type_name(doc));
  for (const auto& [field, value] : doc.items())
    if (field != "tenants") refuse("", "unknown field '" + field + "' (expected only 'tenants')");
  const auto list = doc.find("tenants");
  if (list == doc.end()) refuse("tenants", "missing (required)");
  if (!list->is_array()) refuse("tenants", std::string("must be an array, got ") + type_name(*list));
  if (list->empty()) refuse("tenants", "is empty: give at least one tenant");
  std::vector<Tenant> out;
  std::set<std::string> names, keys;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string where = "tenants[" + std::to_string(i) + "]";
    Tenant t = parse_tenant((*list)[i], where);
    if (!names.insert(t.name).second) refuse(where + ".name", "duplicate name '" + t.name + "'");
    if (!keys.insert(t.key).second) refuse(where + ".key", "duplicate key (the same as an earlier tenant's)");
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<Tenant> load_tenants_file(const std::string& path) {
  std::string text;
  try {
    text = read_whole_file(path);
  } catch (const Error& e) {
    throw Error(std::string("--api-keys ") + e.what());
  }
  try {
    return parse_tenants(text);
  } catch (const Error& e) {
    throw Error("--api-keys " + path + ": " + e.what());
  }
}

}  // namespace db::server

#include "model/config_keys.h"

#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "util/error.h"

namespace db {

using json = nlohmann::json;

int64_t GGUFConfigKeys::req_int(const std::string& suffix) const {
  auto v = f.opt_int(key(suffix));
  if (!v) throw Error(f.path() + ": missing required GGUF key '" + key(suffix) + "'");
  return *v;
}

double GGUFConfigKeys::req_float(const std::string& suffix) const {
  auto v = f.opt_float(key(suffix));
  if (!v) throw Error(f.path() + ": missing required GGUF key '" + key(suffix) + "'");
  return *v;
}

int64_t GGUFConfigKeys::opt_int(const std::string& suffix, int64_t dflt) const {
  return f.opt_int(key(suffix)).value_or(dflt);
}

double GGUFConfigKeys::opt_float(const std::string& suffix, double dflt) const {
  return f.opt_float(key(suffix)).value_or(dflt);
}

const json* HFConfigKeys::find(const json& obj, const std::string& key) const {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

double HFConfigKeys::number(const json& obj, const std::string& key, const std::string& path) const {
  const json* v = find(obj, key);
  if (!v) throw Error(where + ": missing required key '" + path + "'");
  if (!v->is_number()) throw Error(where + ": key '" + path + "' must be a number, got " + v->dump());
  return v->get<double>();
}

double HFConfigKeys::opt(const std::string& key, double dflt) const {
  return find(j, key) ? number(j, key, key) : dflt;
}

double HFConfigKeys::opt_in(const json& obj, const std::string& key, const std::string& path, double dflt) const {
  return find(obj, key) ? number(obj, key, path) : dflt;
}

bool HFConfigKeys::opt_bool(const std::string& key, bool dflt) const {
  const json* v = find(j, key);
  return v ? (v->is_boolean() && v->get<bool>()) : dflt;
}

}  // namespace db

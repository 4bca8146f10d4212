// The metadata readers that config reading hands to an architecture's own config
// hook (Architecture::read_gguf / read_hf in model/registry.h). Every failed lookup
// of a required key throws db::Error naming the file and the key.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

namespace db {

class GGUFFile;
class ModelSource;

// GGUF metadata under the architecture's prefix: key("block_count") is "llama.block_count".
struct GGUFConfigKeys {
  const ModelSource& src;  // for tensors that carry configuration (rope_freqs.weight, biases)
  const GGUFFile& f;
  std::string arch;  // the key prefix: general.architecture

  std::string key(const std::string& suffix) const { return arch + "." + suffix; }
  int64_t req_int(const std::string& suffix) const;
  double req_float(const std::string& suffix) const;
  int64_t opt_int(const std::string& suffix, int64_t dflt) const;
  double opt_float(const std::string& suffix, double dflt) const;
};

// A checkpoint's config.json. Keys holding JSON null count as absent.
struct HFConfigKeys {
  const ModelSource& src;  // for tensors that carry configuration (lm_head.weight)
  const nlohmann::json& j;  // the whole config.json (an object)
  std::string where;        // "<dir>/config.json", for errors

  // The value under `key` in `obj`; nullptr when absent or null.
  const nlohmann::json* find(const nlohmann::json& obj, const std::string& key) const;
  // The number under `key` in `obj`; `path` names it in errors ("rope_scaling.factor").
  double number(const nlohmann::json& obj, const std::string& key, const std::string& path) const;
  double req(const std::string& key) const { return number(j, key, key); }
  double opt(const std::string& key, double dflt) const;
  double opt_in(const nlohmann::json& obj, const std::string& key, const std::string& path, double dflt) const;
  // A top-level boolean; `dflt` when absent, false when present but not a boolean.
  bool opt_bool(const std::string& key, bool dflt) const;
};

}  // namespace db

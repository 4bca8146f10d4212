#include <cmath>
#include <nlohmann/json.hpp>

#include "io/hf_checkpoint.h"
#include "model/config_keys.h"
#include "model/config_readers.h"
#include "model/model_source.h"
#include "model/registry.h"
#include "util/error.h"

namespace db {

namespace {

using json = nlohmann::json;

// transformers >= 5 writes "rope_parameters" {rope_type, rope_theta, ...}; older
// checkpoints write "rope_theta" and "rope_scaling" {type|rope_type, ...} at top level.
void read_rope(const HFConfigKeys& k, ModelConfig& c) {
  const json* params = k.find(k.j, "rope_parameters");
  const json* scaling = params ? params : k.find(k.j, "rope_scaling");
  const std::string sect = params ? "rope_parameters" : "rope_scaling";
  c.rope_theta =
      static_cast<float>(params ? k.opt_in(*params, "rope_theta", sect + ".rope_theta", k.opt("rope_theta", 10000.0))
                                : k.opt("rope_theta", 10000.0));
  const double partial = k.opt("partial_rotary_factor", 1.0);
  c.rope_dims = static_cast<int>(std::lround(c.head_dim * partial));
  if (!scaling) return;
  std::string type = "default";
  for (const char* key : {"rope_type", "type"})
    if (const json* t = k.find(*scaling, key); t && t->is_string()) type = t->get<std::string>();
  RopeScaling& rs = c.rope_scaling;
  auto num = [&](const std::string& key, double dflt) { return k.opt_in(*scaling, key, sect + "." + key, dflt); };
  rs.factor = static_cast<float>(num("factor", 1.0));
  rs.original_context = static_cast<int64_t>(
      num("original_max_position_embeddings", k.opt("original_max_position_embeddings", c.max_context)));
  if (type == "default") {
    rs.type = RopeScalingType::NONE;
  } else if (type == "linear") {
    rs.type = RopeScalingType::LINEAR;
  } else if (type == "llama3") {
    rs.type = RopeScalingType::LLAMA3;
    rs.low_freq_factor = static_cast<float>(num("low_freq_factor", 1.0));
    rs.high_freq_factor = static_cast<float>(num("high_freq_factor", 4.0));
  } else if (type == "yarn") {
    rs.type = RopeScalingType::YARN;
    rs.beta_fast = static_cast<float>(num("beta_fast", 32.0));
    rs.beta_slow = static_cast<float>(num("beta_slow", 1.0));
    const double dflt = rs.factor > 1.0f ? 0.1 * std::log(rs.factor) + 1.0 : 1.0;
    rs.attn_factor = static_cast<float>(num("attention_factor", dflt));
  } else {
    throw Error(k.where + ": " + sect + " type '" + type +
                "' is not supported (supported: default, linear, llama3, yarn)");
  }
}

}  // namespace

ModelConfig config_from_hf(const ModelSource& src) {
  HFConfigKeys k{src, src.hf()->config(), src.config_path()};
  if (!k.j.is_object()) throw Error(k.where + ": expected a JSON object");
  ModelConfig c;
  c.arch = src.architecture();
  c.n_layers = static_cast<int>(k.req("num_hidden_layers"));
  c.hidden = static_cast<int>(k.req("hidden_size"));
  c.ffn_hidden = static_cast<int>(k.req("intermediate_size"));
  c.n_heads = static_cast<int>(k.req("num_attention_heads"));
  c.n_kv_heads = static_cast<int>(k.opt("num_key_value_heads", c.n_heads));
  c.head_dim = static_cast<int>(k.opt("head_dim", c.n_heads > 0 ? c.hidden / c.n_heads : 0));
  c.vocab = static_cast<int>(k.req("vocab_size"));
  c.max_context = static_cast<int64_t>(k.req("max_position_embeddings"));
  c.rms_eps = static_cast<float>(k.req("rms_norm_eps"));
  c.rope_style = kernels::RopeStyle::NEOX;
  read_rope(k, c);
  c.qkv_bias = k.opt_bool("attention_bias", false);
  c.tied_embeddings = k.opt_bool("tie_word_embeddings", !src.find("output.weight").has_value());
  src.arch().read_hf(k, c);
  return c;
}

}  // namespace db

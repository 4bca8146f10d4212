#include <cmath>

#include "io/gguf.h"
#include "kernels/matmul.h"
#include "model/config_keys.h"
#include "model/config_readers.h"
#include "model/model_source.h"
#include "model/registry.h"
#include "util/error.h"

namespace db {

namespace {

void read_rope_scaling(const GGUFConfigKeys& k, ModelConfig& c) {
  RopeScaling& rs = c.rope_scaling;
  const std::string type = k.f.opt_string(k.key("rope.scaling.type")).value_or("none");
  rs.factor = static_cast<float>(k.opt_float("rope.scaling.factor", 1.0));
  rs.original_context = k.opt_int("rope.scaling.original_context_length", c.max_context);
  if (type == "none") {
    rs.type = RopeScalingType::NONE;
    if (auto linear = k.f.opt_float(k.key("rope.scale_linear")); linear && *linear != 1.0) {
      rs.type = RopeScalingType::LINEAR;
      rs.factor = static_cast<float>(*linear);
    }
  } else if (type == "linear") {
    rs.type = RopeScalingType::LINEAR;
  } else if (type == "yarn") {
    rs.type = RopeScalingType::YARN;
    rs.beta_fast = static_cast<float>(k.opt_float("rope.scaling.yarn_beta_fast", 32.0));
    rs.beta_slow = static_cast<float>(k.opt_float("rope.scaling.yarn_beta_slow", 1.0));
    const double base = k.opt_float("rope.scaling.attn_factor", 1.0);
    rs.attn_factor = static_cast<float>(base * (rs.factor > 1.0f ? 1.0 + 0.1 * std::log(rs.factor) : 1.0));
  } else {
    throw Error(k.f.path() + ": GGUF key '" + k.key("rope.scaling.type") + "' is '" + type +
                "'; supported: none, linear, yarn");
  }
  if (auto t = k.src.find("rope_freqs.weight")) {
    if (t->numel() != c.rope_dims / 2)
      throw Error(k.f.path() + ": tensor 'rope_freqs.weight' expected " + std::to_string(c.rope_dims / 2) +
                  " elements, got shape " + t->shape_str());
    TensorView flat = *t;
    flat.shape = {t->numel()};
    rs.freq_factors.resize(static_cast<size_t>(t->numel()));
    kernels::dequantize_row(flat, 0, rs.freq_factors.data());
  }
}

}  // namespace

ModelConfig config_from_gguf(const ModelSource& src) {
  const GGUFFile& f = *src.gguf();
  GGUFConfigKeys k{src, f, src.architecture()};
  ModelConfig c;
  c.arch = k.arch;
  c.n_layers = static_cast<int>(k.req_int("block_count"));
  c.hidden = static_cast<int>(k.req_int("embedding_length"));
  c.ffn_hidden = static_cast<int>(k.req_int("feed_forward_length"));
  c.n_heads = static_cast<int>(k.req_int("attention.head_count"));
  c.n_kv_heads = static_cast<int>(k.opt_int("attention.head_count_kv", c.n_heads));
  c.head_dim = static_cast<int>(k.opt_int("attention.key_length", c.n_heads > 0 ? c.hidden / c.n_heads : 0));
  c.max_context = k.req_int("context_length");
  c.rms_eps = static_cast<float>(k.req_float("attention.layer_norm_rms_epsilon"));
  c.rope_theta = static_cast<float>(k.opt_float("rope.freq_base", 10000.0));
  c.rope_dims = static_cast<int>(k.opt_int("rope.dimension_count", c.head_dim));
  c.rope_style = kernels::RopeStyle::NEOX;  // read_gguf of an architecture whose converter reorders rows changes it
  const TensorView embd = src.tensor("token_embd.weight");
  c.vocab = static_cast<int>(k.opt_int("vocab_size", embd.shape.empty() ? 0 : embd.shape.front()));
  c.qkv_bias = src.find("blk.0.attn_q.bias").has_value();
  c.tied_embeddings = !src.find("output.weight").has_value();
  read_rope_scaling(k, c);
  src.arch().read_gguf(k, c);
  return c;
}

}  // namespace db

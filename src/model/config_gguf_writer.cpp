#include "model/config_gguf_writer.h"

#include <cmath>

#include "io/gguf_writer.h"
#include "model/registry.h"
#include "model/rope_frequencies.h"

namespace db {

namespace {

void add_rope_scaling_keys(const ModelConfig& c, GGUFWriter& w) {
  const RopeScaling& rs = c.rope_scaling;
  const std::string k = c.arch + ".rope.scaling.";
  if (rs.type == RopeScalingType::LINEAR) {
    w.add_string(k + "type", "linear");
    w.add_float32(k + "factor", rs.factor);
  } else if (rs.type == RopeScalingType::YARN) {
    w.add_string(k + "type", "yarn");
    w.add_float32(k + "factor", rs.factor);
    w.add_uint64(k + "original_context_length", static_cast<uint64_t>(rs.original_context));
    w.add_float32(k + "yarn_beta_fast", rs.beta_fast);
    w.add_float32(k + "yarn_beta_slow", rs.beta_slow);
    // The shared reader multiplies this key by 1 + 0.1 ln(factor); an
    // architecture that reads it as is has written it already.
    if (!w.has(k + "attn_factor")) {
      const double mul = rs.factor > 1.0f ? 1.0 + 0.1 * std::log(static_cast<double>(rs.factor)) : 1.0;
      w.add_float32(k + "attn_factor", static_cast<float>(rs.attn_factor / mul));
    }
  }
}

}  // namespace

void add_config_gguf_keys(const ModelConfig& c, const Architecture& arch, GGUFWriter& w) {
  const std::string k = c.arch + ".";
  w.add_string("general.architecture", c.arch);
  arch.write_gguf(c, w);
  w.add_uint32(k + "block_count", static_cast<uint32_t>(c.n_layers));
  w.add_uint64(k + "context_length", static_cast<uint64_t>(c.max_context));
  w.add_uint32(k + "embedding_length", static_cast<uint32_t>(c.hidden));
  w.add_uint32(k + "feed_forward_length", static_cast<uint32_t>(c.ffn_hidden));
  w.add_uint32(k + "attention.head_count", static_cast<uint32_t>(c.n_heads));
  w.add_uint32(k + "attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  w.add_uint32(k + "attention.key_length", static_cast<uint32_t>(c.head_dim));
  w.add_float32(k + "attention.layer_norm_rms_epsilon", c.rms_eps);
  w.add_float32(k + "rope.freq_base", c.rope_theta);
  w.add_uint32(k + "rope.dimension_count", static_cast<uint32_t>(c.rope_dims));
  w.add_uint32(k + "vocab_size", static_cast<uint32_t>(c.vocab));
  add_rope_scaling_keys(c, w);
}

std::vector<float> rope_freq_factors(const ModelConfig& c) {
  if (c.rope_scaling.type != RopeScalingType::LLAMA3) return {};
  ModelConfig plain = c;
  plain.rope_scaling = RopeScaling{};
  const std::vector<float> base = rope_inv_freq(plain), want = rope_inv_freq(c);
  std::vector<float> factors(want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    // The quotient's nearest float may divide back to a neighbour of `want`:
    // the floats around it are tried for one that divides back exactly.
    const float nearest = base[i] / want[i];
    float up = nearest, down = nearest;
    factors[i] = nearest;
    for (int step = 0; step < 64; ++step, up = std::nextafter(up, INFINITY), down = std::nextafter(down, 0.0f)) {
      if (base[i] / up == want[i]) {
        factors[i] = up;
        break;
      }
      if (base[i] / down == want[i]) {
        factors[i] = down;
        break;
      }
    }
  }
  return factors;
}

}  // namespace db

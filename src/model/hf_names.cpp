#include <map>
#include <string>

#include "model/model_source.h"

namespace db {

namespace {
const std::map<std::string, std::string>& global_names() {
  static const std::map<std::string, std::string> m = {
      {"token_embd.weight", "model.embed_tokens.weight"},
      {"output_norm.weight", "model.norm.weight"},
      {"output.weight", "lm_head.weight"},
  };
  return m;
}

// Per-layer suffixes: "attn_q.weight" of "blk.N." is "self_attn.q_proj.weight" of "model.layers.N.".
const std::map<std::string, std::string>& layer_names() {
  static const std::map<std::string, std::string> m = {
      {"attn_norm.weight", "input_layernorm.weight"},
      {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_q.bias", "self_attn.q_proj.bias"},
      {"attn_k.weight", "self_attn.k_proj.weight"},
      {"attn_k.bias", "self_attn.k_proj.bias"},
      {"attn_v.weight", "self_attn.v_proj.weight"},
      {"attn_v.bias", "self_attn.v_proj.bias"},
      {"attn_output.weight", "self_attn.o_proj.weight"},
      {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
  };
  return m;
}
}  // namespace

std::string hf_tensor_name(const std::string& gguf_name) {
  if (auto it = global_names().find(gguf_name); it != global_names().end()) return it->second;
  const std::string prefix = "blk.";
  if (gguf_name.compare(0, prefix.size(), prefix) != 0) return "";
  const size_t dot = gguf_name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return "";
  const std::string layer = gguf_name.substr(prefix.size(), dot - prefix.size());
  if (layer.find_first_not_of("0123456789") != std::string::npos) return "";
  auto it = layer_names().find(gguf_name.substr(dot + 1));
  if (it == layer_names().end()) return "";
  return "model.layers." + layer + "." + it->second;
}

}  // namespace db

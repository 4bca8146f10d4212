#include <sstream>

#include "model/config.h"
#include "model/rope_frequencies.h"

namespace db {

namespace {

class Differ {
 public:
  template <class T>
  void field(const char* name, const T& a, const T& b) {
    if (!first_.empty() || a == b) return;
    std::ostringstream s;
    s.precision(9);
    s << name << ": " << a << " vs " << b;
    first_ = s.str();
  }
  void floats(const char* name, const std::vector<float>& a, const std::vector<float>& b) {
    if (!first_.empty()) return;
    if (a.size() != b.size()) return field(name, a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return field((std::string(name) + "[" + std::to_string(i) + "]").c_str(), a[i], b[i]);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

}  // namespace

std::string config_difference(const ModelConfig& a, const ModelConfig& b, bool ignore_rope_style) {
  Differ d;
  d.field("architecture", a.arch, b.arch);
  d.field("layers", a.n_layers, b.n_layers);
  d.field("hidden size", a.hidden, b.hidden);
  d.field("heads", a.n_heads, b.n_heads);
  d.field("kv heads", a.n_kv_heads, b.n_kv_heads);
  d.field("head dimension", a.head_dim, b.head_dim);
  d.field("feed-forward size", a.ffn_hidden, b.ffn_hidden);
  d.field("vocabulary size", a.vocab, b.vocab);
  d.field("context length", a.max_context, b.max_context);
  d.field("RMSNorm epsilon", a.rms_eps, b.rms_eps);
  d.field("rotary dimensions", a.rope_dims, b.rope_dims);
  if (!ignore_rope_style)
    d.field("RoPE style (0 interleaved, 1 NEOX)", static_cast<int>(a.rope_style), static_cast<int>(b.rope_style));
  d.floats("RoPE frequency", rope_inv_freq(a), rope_inv_freq(b));
  d.field("RoPE cos/sin multiplier", rope_mscale(a), rope_mscale(b));
  d.field("q/k/v biases", a.qkv_bias, b.qkv_bias);
  d.field("tied embeddings", a.tied_embeddings, b.tied_embeddings);
  d.field("MLA q_lora_rank", a.mla.q_lora_rank, b.mla.q_lora_rank);
  d.field("MLA kv_lora_rank", a.mla.kv_lora_rank, b.mla.kv_lora_rank);
  d.field("MLA qk_nope_head_dim", a.mla.qk_nope_dim, b.mla.qk_nope_dim);
  d.field("MLA qk_rope_head_dim", a.mla.qk_rope_dim, b.mla.qk_rope_dim);
  d.field("MLA v_head_dim", a.mla.v_head_dim, b.mla.v_head_dim);
  if (a.mla.enabled() || b.mla.enabled()) {
    d.field("MLA softmax scale", a.mla.softmax_scale, b.mla.softmax_scale);
    d.field("MLA q_a / kv_a norm epsilon", a.mla_norm_eps, b.mla_norm_eps);
  }
  d.field("routed experts", a.moe.n_experts, b.moe.n_experts);
  if (a.moe.enabled() || b.moe.enabled()) {
    d.field("experts per token", a.moe.n_experts_used, b.moe.n_experts_used);
    d.field("shared experts", a.moe.n_shared_experts, b.moe.n_shared_experts);
    d.field("expert feed-forward size", a.moe.expert_ffn, b.moe.expert_ffn);
    d.field("leading dense layers", a.moe.leading_dense_layers, b.moe.leading_dense_layers);
    d.field("expert gating (0 softmax, 1 sigmoid)", static_cast<int>(a.moe.gating), static_cast<int>(b.moe.gating));
    d.field("expert groups", a.moe.n_groups, b.moe.n_groups);
    d.field("expert groups used", a.moe.n_groups_used, b.moe.n_groups_used);
    d.field("expert weights renormalized", a.moe.norm_weights, b.moe.norm_weights);
    d.field("expert weights scale", a.moe.weights_scale, b.moe.weights_scale);
  }
  return d.first();
}

}  // namespace db

#include "engine/model_macs.h"

namespace db {

namespace {

// One layer's attention projections for one token. MLA runs absorbed: queries
// are mapped into the latent space, attention reads the cached latent and rope
// key, and the result is mapped back per head.
double projection_macs_of_layer(const ModelConfig& mc) {
  const double h = mc.hidden, heads = mc.n_heads;
  if (!mc.mla.enabled()) {
    const double q = heads * mc.head_dim, kv = 2.0 * mc.n_kv_heads * mc.head_dim;
    return h * q + h * kv + q * h;
  }
  const MlaConfig& m = mc.mla;
  const double q_out = heads * m.qk_head_dim();
  const double q = m.q_lora_rank > 0 ? h * m.q_lora_rank + double(m.q_lora_rank) * q_out : h * q_out;
  const double kv_a = h * (m.kv_lora_rank + m.qk_rope_dim);
  const double absorb = heads * m.qk_nope_dim * double(m.kv_lora_rank) + heads * double(m.kv_lora_rank) * m.v_head_dim;
  return q + kv_a + absorb + heads * m.v_head_dim * h;
}

double feed_forward_macs_of_layer(const ModelConfig& mc, int layer) {
  const double h = mc.hidden;
  if (!mc.moe.is_moe_layer(layer)) return 3 * h * mc.ffn_hidden;
  const MoeConfig& e = mc.moe;
  return h * e.n_experts + 3 * h * e.expert_ffn * double(e.n_experts_used + e.n_shared_experts);
}

double attention_macs_of_layer(const ModelConfig& mc) {
  const double heads = mc.n_heads;
  if (!mc.mla.enabled()) return 2 * heads * mc.head_dim;  // q.k and p.v
  const MlaConfig& m = mc.mla;
  return heads * (m.kv_lora_rank + m.qk_rope_dim) + heads * double(m.kv_lora_rank);
}

}  // namespace

ModelMacs model_macs(const ModelConfig& mc) {
  ModelMacs m;
  for (int layer = 0; layer < mc.n_layers; ++layer) {
    m.linear_per_token += projection_macs_of_layer(mc) + feed_forward_macs_of_layer(mc, layer);
    m.attention_per_position += attention_macs_of_layer(mc);
  }
  return m;
}

PrefillCost prefill_cost_prior(const ModelConfig& mc) {
  const ModelMacs m = model_macs(mc);
  return prefill_cost_from_macs(m.linear_per_token, m.attention_per_position);
}

}  // namespace db

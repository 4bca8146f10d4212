#include "model/deepseek_arch.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "model/config.h"
#include "model/config_keys.h"
#include "model/deepseek_decoder.h"
#include "util/error.h"

namespace db {

namespace {

using json = nlohmann::json;

// The tensors DeepseekDecoder loads, as DeepSeek's checkpoints (and transformers'
// DeepseekV2/V3ForCausalLM) name them. Routed experts are not here: a checkpoint
// stores one tensor per expert (deepseek_hf_expert_name), a GGUF file one stacked
// tensor per projection; the weight loader finds them (model/deepseek_weights.h).
TensorNameMap deepseek_names() {
  TensorNameMap m;
  m.globals = decoder_global_names();
  m.layer_suffixes = {
      {"attn_norm.weight", "input_layernorm.weight"},
      {"attn_q.weight", "self_attn.q_proj.weight"},
      {"attn_q_a.weight", "self_attn.q_a_proj.weight"},
      {"attn_q_a_norm.weight", "self_attn.q_a_layernorm.weight"},
      {"attn_q_b.weight", "self_attn.q_b_proj.weight"},
      {"attn_kv_a_mqa.weight", "self_attn.kv_a_proj_with_mqa.weight"},
      {"attn_kv_a_norm.weight", "self_attn.kv_a_layernorm.weight"},
      {"attn_kv_b.weight", "self_attn.kv_b_proj.weight"},
      {"attn_output.weight", "self_attn.o_proj.weight"},
      {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},
      {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
      {"ffn_gate_inp.weight", "mlp.gate.weight"},
      {"exp_probs_b.bias", "mlp.gate.e_score_correction_bias"},
      {"ffn_gate_shexp.weight", "mlp.shared_experts.gate_proj.weight"},
      {"ffn_up_shexp.weight", "mlp.shared_experts.up_proj.weight"},
      {"ffn_down_shexp.weight", "mlp.shared_experts.down_proj.weight"},
      // DeepSeek-V3's multi-token-prediction layer (model/mtp_module.h), past the last block.
      {"nextn.eh_proj.weight", "eh_proj.weight"},
      {"nextn.enorm.weight", "enorm.weight"},
      {"nextn.hnorm.weight", "hnorm.weight"},
      {"nextn.embed_tokens.weight", "embed_tokens.weight"},
      {"nextn.shared_head_norm.weight", "shared_head.norm.weight"},
      {"nextn.shared_head_head.weight", "shared_head.head.weight"},
  };
  return m;
}

// YaRN's magnitude correction: 0.1 * mscale * ln(factor) + 1, or 1 when factor <= 1.
double yarn_m(double factor, double mscale) { return factor <= 1.0 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0; }

// Checks shared by both readers, once every MLA / MoE field is set.
void validate_deepseek(const ModelConfig& c, const std::string& where) {
  const MlaConfig& a = c.mla;
  auto positive = [&](int64_t v, const char* what) {
    if (v <= 0) throw Error(where + ": " + what + " must be positive, got " + std::to_string(v));
  };
  positive(a.kv_lora_rank, "kv_lora_rank");
  positive(a.qk_nope_dim, "qk_nope_head_dim");
  positive(a.qk_rope_dim, "qk_rope_head_dim");
  positive(a.v_head_dim, "v_head_dim");
  if (a.q_lora_rank < 0) throw Error(where + ": q_lora_rank must not be negative");
  if (a.qk_rope_dim % 2 != 0)
    throw Error(where + ": qk_rope_head_dim must be even, got " + std::to_string(a.qk_rope_dim));
  const MoeConfig& m = c.moe;
  if (!m.enabled()) return;
  positive(m.n_experts_used, "experts used per token");
  positive(m.expert_ffn, "expert feed-forward size");
  positive(m.n_groups, "expert group count");
  if (m.n_experts_used > m.n_experts)
    throw Error(where + ": " + std::to_string(m.n_experts_used) + " experts used per token, only " +
                std::to_string(m.n_experts) + " experts");
  if (m.n_experts % m.n_groups != 0)
    throw Error(where + ": " + std::to_string(m.n_experts) + " experts do not split into " +
                std::to_string(m.n_groups) + " groups");
  if (m.n_groups_used <= 0 || m.n_groups_used > m.n_groups)
    throw Error(where + ": expert groups used (" + std::to_string(m.n_groups_used) + ") must be in [1, " +
                std::to_string(m.n_groups) + "]");
  if (m.n_groups_used * (m.n_experts / m.n_groups) < m.n_experts_used)
    throw Error(where + ": the " + std::to_string(m.n_groups_used) + " groups kept hold fewer than " +
                std::to_string(m.n_experts_used) + " experts");
  if (m.leading_dense_layers < 0) throw Error(where + ": leading dense layer count must not be negative");
}

// The fields MLA fixes whatever the format.
void set_mla_common(ModelConfig& c) {
  c.head_dim = c.mla.qk_head_dim();
  c.n_kv_heads = c.n_heads;  // every query head has its own (decompressed) key
  c.rope_dims = c.mla.qk_rope_dim;
}

void read_deepseek_gguf(const GGUFConfigKeys& k, ModelConfig& c) {
  MlaConfig& a = c.mla;
  a.q_lora_rank = static_cast<int>(k.opt_int("attention.q_lora_rank", 0));
  a.kv_lora_rank = static_cast<int>(k.req_int("attention.kv_lora_rank"));
  a.qk_rope_dim = static_cast<int>(k.req_int("rope.dimension_count"));
  // Files converted for absorbed MLA (llama.cpp's split attn_k_b / attn_v_b) describe the
  // latent as MQA in key_length / value_length and the per-head widths in the *_mla keys.
  const bool split = k.f.has(k.key("attention.key_length_mla"));
  const int qk_head = static_cast<int>(k.req_int(split ? "attention.key_length_mla" : "attention.key_length"));
  a.v_head_dim = static_cast<int>(k.req_int(split ? "attention.value_length_mla" : "attention.value_length"));
  a.qk_nope_dim = qk_head - a.qk_rope_dim;
  set_mla_common(c);
  c.rope_style = kernels::RopeStyle::INTERLEAVED;  // llama.cpp ropes deepseek2 with adjacent pairs, rows unpermuted
  c.mla_norm_eps = c.rms_eps;                      // llama.cpp uses the model's eps for q_a / kv_a norms too

  // The shared reader multiplies YaRN's cos/sin by 0.1 ln f + 1; DeepSeek's factor is
  // m(f, mscale) / m(f, mscale_all_dim), which GGUF cannot express (no mscale) and which
  // is 1 in every released config (mscale == mscale_all_dim). llama.cpp cancels it likewise.
  c.rope_scaling.attn_factor = static_cast<float>(k.opt_float("rope.scaling.attn_factor", 1.0));
  const double log_mul = k.opt_float("rope.scaling.yarn_log_multiplier", 0.0);
  const double factor = c.rope_scaling.type == RopeScalingType::YARN ? c.rope_scaling.factor : 1.0;
  const double m = factor <= 1.0 ? 1.0 : 1.0 + log_mul * std::log(factor);
  a.softmax_scale = static_cast<float>(m * m / std::sqrt(static_cast<double>(qk_head)));

  MoeConfig& e = c.moe;
  e.n_experts = static_cast<int>(k.opt_int("expert_count", 0));
  if (e.n_experts > 0) {
    e.n_experts_used = static_cast<int>(k.req_int("expert_used_count"));
    e.n_shared_experts = static_cast<int>(k.opt_int("expert_shared_count", 0));
    e.expert_ffn = static_cast<int>(k.req_int("expert_feed_forward_length"));
    e.leading_dense_layers = static_cast<int>(k.opt_int("leading_dense_block_count", 0));
    e.weights_scale = static_cast<float>(k.opt_float("expert_weights_scale", 1.0));
    e.norm_weights = k.f.opt_bool(k.key("expert_weights_norm")).value_or(false);
    // Absent in DeepSeek-V2 files written before the key existed: softmax, as llama.cpp assumes.
    const int64_t gating = k.opt_int("expert_gating_func", 1);
    if (gating != 1 && gating != 2)
      throw Error(k.f.path() + ": GGUF key '" + k.key("expert_gating_func") + "' is " + std::to_string(gating) +
                  "; supported: 1 (softmax), 2 (sigmoid)");
    // GGUF has no topk_method: the group score follows the gating (softmax: the group's
    // best score, as DeepSeek-V2; sigmoid: its best two, as V3). llama.cpp always sums the
    // best two, which routes DeepSeek-V2 (group-limited) differently; we follow the reference.
    e.gating = gating == 2 ? ExpertGating::Sigmoid : ExpertGating::Softmax;
    const int64_t groups = k.opt_int("expert_group_count", 0);
    e.n_groups = groups > 0 ? static_cast<int>(groups) : 1;
    const int64_t used = k.opt_int("expert_group_used_count", 0);
    e.n_groups_used = used > 0 ? static_cast<int>(used) : e.n_groups;
  }
  validate_deepseek(c, k.f.path());
}

// The yarn_log_multiplier (a float32 key) from which read_deepseek_gguf's
// m * m / sqrt(qk_head), m = 1 + multiplier * ln(factor), rounds to exactly
// c.mla.softmax_scale: the float nearest the exact multiplier may miss it by
// an ulp, so the floats around it are tried; the nearest when none hits.
float yarn_log_multiplier_for(const ModelConfig& c) {
  const double factor = c.rope_scaling.factor, root = std::sqrt(static_cast<double>(c.mla.qk_head_dim()));
  const float want = c.mla.softmax_scale;
  auto scale_of = [&](float mul) {
    const double m = 1.0 + static_cast<double>(mul) * std::log(factor);
    return static_cast<float>(m * m / root);
  };
  const float nearest = static_cast<float>((std::sqrt(static_cast<double>(want) * root) - 1.0) / std::log(factor));
  float up = nearest, down = nearest;
  for (int i = 0; i < 64; ++i, up = std::nextafter(up, INFINITY), down = std::nextafter(down, -INFINITY)) {
    if (scale_of(up) == want) return up;
    if (scale_of(down) == want) return down;
  }
  return nearest;
}

void write_deepseek_gguf(const ModelConfig& c, GGUFWriter& w) {
  const std::string k = c.arch + ".";
  const MlaConfig& a = c.mla;
  if (a.q_lora_rank > 0) w.add_uint32(k + "attention.q_lora_rank", static_cast<uint32_t>(a.q_lora_rank));
  w.add_uint32(k + "attention.kv_lora_rank", static_cast<uint32_t>(a.kv_lora_rank));
  w.add_uint32(k + "attention.value_length", static_cast<uint32_t>(a.v_head_dim));
  if (c.rope_scaling.type == RopeScalingType::YARN) {
    w.add_float32(k + "rope.scaling.attn_factor", c.rope_scaling.attn_factor);  // read as is, not times 1 + 0.1 ln f
    if (c.rope_scaling.factor > 1.0f) w.add_float32(k + "rope.scaling.yarn_log_multiplier", yarn_log_multiplier_for(c));
  }
  const MoeConfig& e = c.moe;
  if (!e.enabled()) return;
  w.add_uint32(k + "expert_count", static_cast<uint32_t>(e.n_experts));
  w.add_uint32(k + "expert_used_count", static_cast<uint32_t>(e.n_experts_used));
  w.add_uint32(k + "expert_shared_count", static_cast<uint32_t>(e.n_shared_experts));
  w.add_uint32(k + "expert_feed_forward_length", static_cast<uint32_t>(e.expert_ffn));
  w.add_uint32(k + "leading_dense_block_count", static_cast<uint32_t>(e.leading_dense_layers));
  w.add_float32(k + "expert_weights_scale", e.weights_scale);
  w.add_bool(k + "expert_weights_norm", e.norm_weights);
  w.add_uint32(k + "expert_gating_func", e.gating == ExpertGating::Sigmoid ? 2 : 1);
  w.add_uint32(k + "expert_group_count", static_cast<uint32_t>(e.n_groups));
  w.add_uint32(k + "expert_group_used_count", static_cast<uint32_t>(e.n_groups_used));
}

// The YaRN section of config.json: rope_parameters (transformers >= 5) or rope_scaling.
const json* hf_rope_section(const HFConfigKeys& k, std::string& name) {
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (const json* s = k.find(k.j, key); s && s->is_object()) {
      name = key;
      return s;
    }
  return nullptr;
}

std::string hf_string(const HFConfigKeys& k, const std::string& key, const std::string& dflt) {
  const json* v = k.find(k.j, key);
  if (!v) return dflt;
  if (!v->is_string()) throw Error(k.where + ": key '" + key + "' must be a string, got " + v->dump());
  return v->get<std::string>();
}

void read_deepseek_hf_yarn(const HFConfigKeys& k, ModelConfig& c) {
  MlaConfig& a = c.mla;
  a.softmax_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(a.qk_head_dim())));
  std::string sect;
  const json* s = hf_rope_section(k, sect);
  if (!s || c.rope_scaling.type != RopeScalingType::YARN) return;
  const double f = c.rope_scaling.factor;
  // DeepSeek's defaults (transformers reads the same keys): mscale 1, mscale_all_dim 0.
  const double mscale = k.opt_in(*s, "mscale", sect + ".mscale", 1.0);
  const double mscale_all = k.opt_in(*s, "mscale_all_dim", sect + ".mscale_all_dim", 0.0);
  if (!k.find(*s, "attention_factor"))
    c.rope_scaling.attn_factor = static_cast<float>(yarn_m(f, mscale) / yarn_m(f, mscale_all));
  if (mscale_all != 0.0)
    a.softmax_scale = static_cast<float>(a.softmax_scale * yarn_m(f, mscale_all) * yarn_m(f, mscale_all));
}

void read_deepseek_hf_moe(const HFConfigKeys& k, ModelConfig& c, bool v3) {
  MoeConfig& e = c.moe;
  e.n_experts = static_cast<int>(k.opt("n_routed_experts", 0));
  if (e.n_experts <= 0) return;
  e.n_experts_used = static_cast<int>(k.req("num_experts_per_tok"));
  e.n_shared_experts = static_cast<int>(k.opt("n_shared_experts", 0));
  e.expert_ffn = static_cast<int>(k.req("moe_intermediate_size"));
  e.leading_dense_layers = static_cast<int>(k.opt("first_k_dense_replace", 0));
  e.weights_scale = static_cast<float>(k.opt("routed_scaling_factor", 1.0));
  const std::string scoring = hf_string(k, "scoring_func", v3 ? "sigmoid" : "softmax");
  if (scoring != "softmax" && scoring != "sigmoid")
    throw Error(k.where + ": scoring_func '" + scoring + "' is not supported (supported: softmax, sigmoid)");
  e.gating = scoring == "sigmoid" ? ExpertGating::Sigmoid : ExpertGating::Softmax;
  const std::string method = hf_string(k, "topk_method", v3 ? "noaux_tc" : "greedy");
  if (method != "greedy" && method != "group_limited_greedy" && method != "noaux_tc")
    throw Error(k.where + ": topk_method '" + method +
                "' is not supported (supported: greedy, group_limited_greedy, noaux_tc)");
  if (method == "greedy") {
    e.n_groups = e.n_groups_used = 1;
  } else {
    e.n_groups = static_cast<int>(k.opt("n_group", 1));
    e.n_groups_used = static_cast<int>(k.opt("topk_group", e.n_groups));
  }
  // transformers' DeepSeek-V2 router ignores norm_topk_prob (DeepSeek's own V2 code would
  // renormalize and then not scale; false in every released V2 config). V3 honours it.
  e.norm_weights = v3 && k.opt_bool("norm_topk_prob", false);
}

void read_deepseek_hf(const HFConfigKeys& k, ModelConfig& c) {
  const bool v3 = hf_string(k, "model_type", "") == "deepseek_v3";
  MlaConfig& a = c.mla;
  a.q_lora_rank = static_cast<int>(k.opt("q_lora_rank", 0));  // null in V2-Lite: queries projected directly
  a.kv_lora_rank = static_cast<int>(k.req("kv_lora_rank"));
  a.qk_nope_dim = static_cast<int>(k.req("qk_nope_head_dim"));
  a.qk_rope_dim = static_cast<int>(k.req("qk_rope_head_dim"));
  a.v_head_dim = static_cast<int>(k.req("v_head_dim"));
  set_mla_common(c);
  // V2 pairs adjacent elements (view_as_complex); V3 too unless rope_interleave is false.
  const bool interleave = !v3 || k.opt_bool("rope_interleave", true);
  c.rope_style = interleave ? kernels::RopeStyle::INTERLEAVED : kernels::RopeStyle::NEOX;
  c.mla_norm_eps = 1e-6f;  // transformers and DeepSeek's code build q_a / kv_a norms with 1e-6 whatever rms_norm_eps
  read_deepseek_hf_yarn(k, c);
  read_deepseek_hf_moe(k, c, v3);
  validate_deepseek(c, k.where);
}

}  // namespace

std::string deepseek_hf_expert_name(int layer, int expert, const std::string& proj) {
  return "model.layers." + std::to_string(layer) + ".mlp.experts." + std::to_string(expert) + "." + proj + ".weight";
}

Architecture deepseek2_architecture() {
  return {"deepseek2",       {"deepseek_v2", "deepseek_v3"}, &make_deepseek_decoder, &read_deepseek_gguf,
          &read_deepseek_hf, deepseek_names(),           &write_deepseek_gguf,   /*gguf_pairs_qk_rows=*/false};
}

}  // namespace db

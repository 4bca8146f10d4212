// The registry entry of DeepSeek-V2 / V2-Lite / V3 (and Moonlight, a V3): GGUF
// architecture "deepseek2", checkpoint model types "deepseek_v2" and "deepseek_v3",
// built by DeepseekDecoder (model/deepseek_decoder.h).
//
// Configuration read (besides the shared fields of model/config.h):
//   ModelConfig::mla  q_lora_rank, kv_lora_rank, qk_nope / qk_rope / v head widths, and the
//                     softmax scale (qk_head_dim^-0.5 * m(factor, mscale_all_dim)^2 under
//                     YaRN, m(f, s) = 0.1 s ln f + 1; GGUF carries 0.1 * mscale_all_dim as
//                     rope.scaling.yarn_log_multiplier);
//   ModelConfig::moe  experts, router (gating, groups, normalization, scale);
//   head_dim = qk_nope + qk_rope, n_kv_heads = n_heads, rope_dims = qk_rope (the LAST
//   rope_dims of each query head rotate), rope_style INTERLEAVED (adjacent pairs) in
//   both formats (HF V3 with rope_interleave = false: NEOX), YaRN's cos/sin factor
//   m(f, mscale) / m(f, mscale_all_dim) (GGUF, which lacks mscale: 1).
#pragma once
#include <string>

#include "model/registry.h"

namespace db {

Architecture deepseek2_architecture();

// The checkpoint name of routed expert `expert`'s projection `proj` ("gate_proj",
// "up_proj", "down_proj") in layer `layer`, in DeepSeek's per-expert naming:
// "model.layers.<layer>.mlp.experts.<expert>.<proj>.weight".
std::string deepseek_hf_expert_name(int layer, int expert, const std::string& proj);

}  // namespace db

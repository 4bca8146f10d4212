// Multi-head latent attention (DeepSeek-V2/V3): keys and values are rebuilt per
// head from one compressed latent of kv_lora_rank values per token, which with a
// rope key of qk_rope_dim values shared by all heads is all the KV cache holds.
#pragma once

namespace db {

struct MlaConfig {
  int q_lora_rank = 0;   // queries go through a rank-q_lora_rank bottleneck (q_a, norm, q_b); 0 = direct q
  int kv_lora_rank = 0;  // width of the cached latent; 0 = not MLA
  int qk_nope_dim = 0;   // per-head query/key dims without RoPE
  int qk_rope_dim = 0;   // per-head query dims with RoPE, and the shared rope key's width
  int v_head_dim = 0;    // per-head value width
  float softmax_scale = 0.0f;  // multiplies q.k: (qk_nope_dim + qk_rope_dim)^-0.5 x YaRN's mscale^2

  bool enabled() const { return kv_lora_rank > 0; }
  int qk_head_dim() const { return qk_nope_dim + qk_rope_dim; }
};

}  // namespace db

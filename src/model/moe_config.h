// The mixture-of-experts feed-forward of a DeepSeekMoE model (DeepSeek-V2/V3):
// a router picks n_experts_used of n_experts routed experts per token, and
// n_shared_experts shared experts run on every token.
#pragma once

namespace db {

// How router logits become expert scores.
enum class ExpertGating {
  Softmax,  // DeepSeek-V2: softmax over all experts; a group's score is its best expert's
  Sigmoid,  // DeepSeek-V3: sigmoid per expert; a group's score is the sum of its best two
            // (bias-corrected) scores; the score-correction bias steers selection only
};

struct MoeConfig {
  int n_experts = 0;             // routed experts per MoE layer; 0 = a dense model
  int n_experts_used = 0;        // routed experts per token (top-k)
  int n_shared_experts = 0;      // shared experts, fused into one FFN n_shared_experts x expert_ffn wide
  int expert_ffn = 0;            // inner width of one routed (and one shared) expert
  int leading_dense_layers = 0;  // the first layers use a dense FFN of ModelConfig::ffn_hidden
  ExpertGating gating = ExpertGating::Softmax;
  int n_groups = 1;              // experts split into groups of n_experts / n_groups ...
  int n_groups_used = 1;         // ... and only the best n_groups_used groups' experts can be chosen
  bool norm_weights = false;     // the chosen experts' weights are renormalized to sum to 1
  float weights_scale = 1.0f;    // then multiplied by this (routed_scaling_factor)

  bool enabled() const { return n_experts > 0; }
  bool is_moe_layer(int layer) const { return enabled() && layer >= leading_dense_layers; }
};

}  // namespace db

// The hyper-parameters of a decoder-only transformer, read from GGUF metadata or
// a Hugging Face config.json.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/rope.h"
#include "model/mla_config.h"
#include "model/moe_config.h"

namespace db {

class ModelSource;

// How RoPE frequencies are stretched for contexts longer than training. Supported:
//   NONE;
//   LINEAR: every frequency divided by `factor` (GGUF rope.scaling.type "linear" or
//           rope.scale_linear; HF rope_type "linear");
//   LLAMA3: per-frequency divisors from factor / low_freq_factor / high_freq_factor /
//           original_context (HF rope_type "llama3"); GGUF files carry the same
//           divisors precomputed as the tensor rope_freqs.weight (-> freq_factors);
//   YARN:   HF's ramp between interpolated and extrapolated frequencies over
//           [beta_slow, beta_fast] rotations, cos/sin multiplied by attn_factor.
// HF "dynamic" (NTK) and "longrope" are rejected with an error.
enum class RopeScalingType { NONE, LINEAR, YARN, LLAMA3 };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::NONE;  // which stretch applies
  float factor = 1.0f;                           // context stretch factor (LINEAR, LLAMA3, YARN)
  int64_t original_context = 0;                  // training context before stretching (LLAMA3, YARN)
  float low_freq_factor = 1.0f;     // LLAMA3: wavelengths above original_context / this are divided by factor
  float high_freq_factor = 4.0f;    // LLAMA3: wavelengths below original_context / this stay
  float beta_fast = 32.0f;          // YARN: rotations where extrapolation ends
  float beta_slow = 1.0f;           // YARN: rotations where interpolation starts
  float attn_factor = 1.0f;         // YARN: multiplier of cos and sin
  std::vector<float> freq_factors;  // per rotated pair, divides its frequency (GGUF rope_freqs.weight); empty = none
};

struct ModelConfig {
  std::string arch;             // architecture in GGUF spelling: "llama", "qwen2"
  int n_layers = 0;             // decoder blocks
  int hidden = 0;               // residual stream width
  int n_heads = 0;              // query heads
  int n_kv_heads = 0;           // key/value heads (n_heads / n_kv_heads queries share one; MLA: n_heads)
  int head_dim = 0;             // width of one head (MLA: of one query/key head, qk_nope + qk_rope)
  int ffn_hidden = 0;           // feed-forward inner width
  int vocab = 0;                // rows of the embedding and the output projection
  int64_t max_context = 0;      // training context length (positions the model was built for)
  float rms_eps = 1e-6f;        // RMSNorm epsilon
  float rope_theta = 10000.0f;  // RoPE base frequency
  int rope_dims = 0;            // dims of each head that RoPE rotates (even, <= head_dim): the leading
                                // ones, or with MLA the trailing qk_rope_dim ones
  kernels::RopeStyle rope_style = kernels::RopeStyle::NEOX;  // INTERLEAVED for GGUF llama, NEOX otherwise
  RopeScaling rope_scaling;                                  // long-context frequency stretch
  bool qkv_bias = false;                                     // q/k/v projections carry biases (qwen2)
  bool tied_embeddings = false;                              // the output projection is the token embedding
  MlaConfig mla;               // multi-head latent attention (DeepSeek-V2/V3); disabled unless kv_lora_rank > 0
  MoeConfig moe;               // DeepSeekMoE feed-forward; disabled unless n_experts > 0
  float mla_norm_eps = 1e-6f;  // RMSNorm epsilon of MLA's q_a / kv_a norms (HF: always 1e-6; GGUF: rms_eps)
};

// The first field in which a and b differ so that a model would compute
// differently, as "<field>: <a> vs <b>"; empty when none does. RoPE is
// compared by its frequencies and cos/sin multiplier (model/rope_frequencies.h),
// however each states them; its style not with `ignore_rope_style` (a file
// whose rows are permuted to match the other style).
std::string config_difference(const ModelConfig& a, const ModelConfig& b, bool ignore_rope_style = false);

// Reads the common decoder hyper-parameters of an opened model. Missing required
// keys throw db::Error naming the file and the key.
ModelConfig read_model_config(const ModelSource& src);

}  // namespace db

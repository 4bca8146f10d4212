// The tensors of a DeepSeek-V2/V3 decoder (MLA attention, dense or DeepSeekMoE
// feed-forward), from a GGUF "deepseek2" file (legacy attn_kv_b or split
// attn_k_b / attn_v_b) or a DeepSeek checkpoint. Matrices are views into the
// mapped file in their stored dtype, or repacked copies (kernels/packed_weights.h);
// norms, router and biases are small f32 copies; W_UK^T built from a combined
// attn_kv_b is owned here (its type: built_uk_type below).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/expert_shard.h"
#include "model/mla_shard.h"
#include "model/moe_feed_forward.h"
#include "model/weight_loading.h"
#include "tensor/tensor.h"
#include "util/thread_pool.h"

namespace db {

class ModelSource;

// MLA's weight-absorbed attention per head h (n = qk_nope, c = kv_lora, v = v_head_dim):
//   q_abs_h = W_UK_h^T q_nope_h     (k_nope_h . q_nope_h = latent . q_abs_h)
//   out_h   = W_UV_h (attention-weighted latent)
struct MlaLayerWeights {
  std::vector<float> attn_norm;  // [hidden]
  TensorView attn_q;             // {n_heads * qk_head, hidden}; no q compression only
  TensorView attn_q_a;           // {q_lora, hidden}; q compression only
  std::vector<float> q_a_norm;   // [q_lora]; q compression only
  TensorView attn_q_b;           // {n_heads * qk_head, q_lora}; q compression only
  TensorView attn_kv_a;          // {kv_lora + qk_rope, hidden}: [latent | k_pe]
  std::vector<float> kv_a_norm;  // [kv_lora]
  std::vector<TensorView> uk_t;  // per head: W_UK_h^T {kv_lora, qk_nope} (y = W x maps q_nope to the latent)
  std::vector<TensorView> uv;    // per head: W_UV_h {v_head_dim, kv_lora}
  TensorView attn_output;        // {hidden, n_heads * v_head_dim}
  std::vector<float> ffn_norm;   // [hidden]
  // Dense layers (layer < moe.leading_dense_layers, or every layer without MoE):
  TensorView ffn_gate, ffn_up;  // {ffn_hidden, hidden}
  TensorView ffn_down;          // {hidden, ffn_hidden}
  // MoE layers:
  MoeLayerWeights moe;
};

// DeepSeek-V3's multi-token-prediction (MTP) layer, stored after the last block
// (blk.N, N = block_count; model.layers.N in a checkpoint): a whole block plus
// the nextn.* tensors that feed it and read it out (model/mtp_module.h).
struct MtpWeights {
  MlaLayerWeights block;
  std::vector<float> enorm, hnorm;  // [hidden] norms of the token embedding and of the hidden state
  TensorView eh_proj;               // {hidden, 2 * hidden} over [enorm(embedding) | hnorm(hidden state)]
  TensorView embed;                 // {vocab, hidden}: nextn.embed_tokens, else the model's token_embd
  std::vector<float> head_norm;     // [hidden] nextn.shared_head_norm
  TensorView head;                  // {vocab, hidden}: nextn.shared_head_head, else the model's output
};

// token_embd, output_norm, output and the packed store (model/weight_loading.h), then the layers.
struct DeepseekWeights : DecoderGlobalWeights {
  std::vector<MlaLayerWeights> layers;
  std::optional<MtpWeights> mtp;  // loaded on demand (load_mtp_weights)
  std::vector<std::unique_ptr<uint8_t[]>> built;  // owns the matrices built at load (W_UK^T from attn_kv_b)
  int64_t built_matrices = 0;                     // how many: one per head of each layer with attn_kv_b
};

// MLA's absorbed matrices from a combined attn_kv_b {n_heads * (nope + v), kv_lora}
// (the rows h*(nope+v) + i are W_UK_h for i < nope, W_UV_h after). The loader
// builds them at every load of such a file; the packer (model/gguf_pack.h)
// builds them once and stores them as llama.cpp's split attn_k_b / attn_v_b, so
// that both give the same bytes.
//
// The type W_UK^T is stored in when built from a kv_b of type t: t itself for
// the float types (a transpose is exact in them); Q8_0 for quantized ones, whose
// blocks run along the other axis (the values are those of kv_b rounded once
// more to 8 bits, as a quantizer writing the split attn_k_b would; a quarter of
// F32's bytes, read once per token), F32 when the rows of `nope` elements are
// not whole Q8_0 blocks.
DType built_uk_type(DType kv_b_type, int64_t nope);
// W_UK_h^T for the heads [head_begin, head_begin + n_heads), as one Rows block
// {n_heads, kv_lora, nope} of type t (the layout and shape of attn_k_b). kv_b must
// be in Rows layout.
std::unique_ptr<uint8_t[]> transpose_uk(const TensorView& kv_b, const MlaConfig& a, int n_heads, DType t,
                                        int head_begin = 0);
// W_UV_h {v_head_dim, kv_lora}: head h's rows of kv_b, in place.
TensorView kv_b_uv_head(const TensorView& kv_b, const MlaConfig& a, int64_t h);

enum class ExpertProj { Gate, Up, Down };

// Routed expert `e`'s matrix `proj` of layer `layer`, in either format: GGUF, the
// 2-D slice of the stacked blk.L.ffn_{gate,up,down}_exps.weight {n_experts, rows, cols};
// a checkpoint, DeepSeek's per-expert model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight,
// or else transformers' fused mlp.experts.gate_up_proj {n_experts, 2 * ffn, hidden}
// (gate rows first) / mlp.experts.down_proj {n_experts, hidden, ffn}. Unchecked shape;
// throws db::Error naming the tensor when none is found.
TensorView expert_matrix(const ModelSource& src, int layer, ExpertProj proj, int e);

// Finds every tensor by its GGUF name and checks its shape and dtype; throws
// db::Error naming the file, the tensor, and the expected and found shape.
// Matrices are repacked on `pool` when given. Tensors the model does not use (the
// multi-token-prediction layers of V3: blk.N.nextn.* and layers past block_count)
// are skipped with one note on stderr. Only the routed experts `experts` holds are
// read (and repacked); the others get views of the right shape with null data
// (expert parallelism, model/expert_shard.h). Tensor parallel (heads_and_columns
// not whole, model/mla_shard.h): uk_t / uv hold only its heads, attn_q / attn_q_b
// their rows, and the dense FFN's and shared experts' gate / up their columns' rows;
// attn_output and the downs stay whole (the gather join).
DeepseekWeights load_deepseek_weights(const ModelSource& src, const ModelConfig& c, ThreadPool* pool = nullptr,
                                      const ExpertShard& experts = {}, const MlaShard& heads_and_columns = {});
// The shard of one process: every head and column.
MlaShard whole_mla_shard(const ModelConfig& c);

// True when the file holds a multi-token-prediction layer (its nextn eh_proj).
bool has_mtp_layer(const ModelSource& src, const ModelConfig& c);
// Loads the multi-token-prediction layer into w.mtp (checked like the layers;
// its block is a MoE block when the model's last one is). Throws db::Error
// naming the file when it has none or a tensor is missing or misshapen.
void load_mtp_weights(const ModelSource& src, const ModelConfig& c, DeepseekWeights& w, ThreadPool* pool = nullptr);

}  // namespace db

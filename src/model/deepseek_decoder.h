// The DeepSeek-V2/V3 decoder: pre-norm blocks of multi-head latent attention
// (MLA, run in its weight-absorbed form over a latent KV cache) and a SwiGLU
// feed-forward that is dense in the first moe.leading_dense_layers blocks and
// DeepSeekMoE (model/moe_feed_forward.h) after them.
//
// Attention of one block, per token (n = qk_nope, r = qk_rope, c = kv_lora, v = v_head_dim):
//   q      = attn_q x, or attn_q_b RMSNorm(attn_q_a x)      [n_heads][n | r]
//   kv_a   = attn_kv_a_mqa x                                [c | r]
//   latent = RMSNorm(kv_a[:c]), k_pe = kv_a[c:]; q's r part and k_pe are roped
//            (adjacent pairs, YaRN frequencies); [latent | k_pe] is the cached row
//   q_abs_h = [W_UK_h^T q_nope_h | q_pe_h]                  (c + r)
//   o_h    = softmax(scale * q_abs_h . rows) . latents      (paged attention, one
//            kv head of width c + r whose values are the first c: V aliases K)
//   out    = attn_output [W_UV_h o_h]_h
// This equals the reference's decompressed attention (k_nope_h = W_UK_h latent,
// v_h = W_UV_h latent) up to float summation order.
//
// Prompts run the absorbed form too, not per-head K/V materialized for the chunk:
// it needs no second code path, no per-chunk copies of K/V and reads the same
// cache. What materializing would save is small: in V2-Lite's shape a 512-token
// prompt spends 3.4 GMAC in absorbed attention (projections included) against
// 1.7 materialized, beside 1280 GMAC in the weight products; at 4096 tokens the
// attention is still under 2% of the MACs (bench/deepseek/README.md).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "backend/compute_backend.h"
#include "dist/communicator.h"
#include "dist/shard_plan.h"
#include "kernels/matmul.h"
#include "model/decoder_steps.h"
#include "model/deepseek_weights.h"
#include "model/layer_profile.h"
#include "model/model.h"
#include "model/model_source.h"
#include "model/moe_feed_forward.h"

namespace db {

// Registry factory for "deepseek2".
std::unique_ptr<Model> make_deepseek_decoder(std::unique_ptr<ModelSource> src, ThreadPool* load_pool);
// One rank's part of an expert-parallel group (model/expert_shard.h): the routed
// experts split across `group`, the rest replicated. Every rank must be fed the same
// steps. Throws db::Error for a model without routed experts or more ranks than experts.
std::unique_ptr<Model> make_deepseek_decoder_expert_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                                          dist::Communicator& group);
// One rank's part of a model split across a tensor-parallel group `tensor_group`
// (model/mla_shard.h: its heads and FFN columns, joined by gathers) and, when
// `expert_group` is not null, its routed experts split across that group as above.
// Every rank of both groups must be fed the same steps. Throws db::Error when a rank
// would hold no head or column, or for the reduce join (not built for MLA).
std::unique_ptr<Model> make_deepseek_decoder_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                                   dist::Communicator& tensor_group, dist::ShardJoin join,
                                                   dist::Communicator* expert_group = nullptr);

class DeepseekDecoder : public Model {
 public:
  // expert_group: split the routed experts across it (null: one process, every
  // expert). tensor_group: split the heads and the dense / shared FFN columns across
  // it (model/mla_shard.h; null: every head and column). config() stays the whole model's.
  DeepseekDecoder(std::unique_ptr<ModelSource> src, ModelConfig config, ThreadPool* load_pool = nullptr,
                  dist::Communicator* expert_group = nullptr, dist::Communicator* tensor_group = nullptr);
  ~DeepseekDecoder() override;

  const ModelConfig& config() const override { return config_; }
  // Latent: one row of kv_lora_rank + qk_rope_dim per token and layer; V = its first kv_lora_rank.
  KVCacheShape kv_cache_shape() const override;
  ComputeBackend* kv_memory() const override;
  void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
               std::vector<float>& logits) override;
  // Counted after each MoE layer's forward; nullptr for a dense model. Expert
  // parallel: every expert's counts (every rank routes every token; this rank's load
  // is that of its experts, expert_shard()).
  const RouterStats* router_stats() const override { return moe_ ? &router_stats_ : nullptr; }
  // Throws db::Error when the experts are split (the MTP layer is not split).
  MtpModule* mtp(ThreadPool* load_pool = nullptr) override;
  // The routed experts this model holds (every one unless expert parallel).
  const ExpertShard& expert_shard() const { return experts_; }
  // The heads and FFN columns this model holds (every one unless tensor parallel).
  const MlaShard& tensor_shard() const { return shard_; }
  std::span<const float> last_hidden_states() const override { return last_hidden_; }

  // Per-layer block times of every forward() since the model was built
  // (model/layer_profile.h): kept only when layer_profile_requested() was true
  // at construction (DB_PROFILE_LAYERS=1), else nullptr and nothing is timed.
  // The destructor prints its table to stderr, so a `deepbatch` command run
  // with the variable set ends with it. MTP steps are not timed.
  const LayerProfile* layer_profile() const { return profile_.get(); }

 private:
  // Activations of one step besides DecoderScratch's (grown, never shrunk).
  struct Scratch : DecoderScratch {
    DeviceBuffer q_a;       // [n][q_lora] (q compression only)
    DeviceBuffer q;         // [n][n_heads][qk_nope + qk_rope]
    DeviceBuffer kv_a;      // [n][kv_lora + qk_rope]: becomes the cached row [latent | k_pe]
    DeviceBuffer q_abs;     // [n][n_heads][kv_lora + qk_rope]
    DeviceBuffer lat;       // [n][n_heads][kv_lora] attention output in latent space
    DeviceBuffer attn;      // [n][n_heads * v_head_dim]
    DeviceBuffer hidden;    // [n][hidden] final hidden states (while the MTP module is loaded)
    std::vector<kernels::MatmulTask> head_tasks;  // [n_heads] one product per head
    DeviceBuffer attn_all, ffn_all, shared_all;   // tensor parallel: gathered rows
    std::vector<float> gather;                    // tensor parallel: the collective's host scratch
  };

  // The MTP module over this decoder's weights and scratch.
  class Mtp;

  void reserve(int64_t n, int64_t n_logits);
  // Blocks read their normed input from s_.xn, add their output to s_.x and leave
  // the next block's normed input in s_.xn. Attention reads and writes layer
  // kv_layer of kv. With a profile, the parts are timed into its row kv_layer.
  void attention_block(const MlaLayerWeights& w, int kv_layer, const Batch& batch, const AttentionMetadata& attn,
                       KVStore& kv, LayerProfile* profile);
  // s_.q and s_.kv_a from s_.xn; kv_a normed and roped into the cache row, q's rope part roped.
  void project_qkv(const MlaLayerWeights& w, int64_t n);
  // s_.q_abs from s_.q: per head W_UK_h^T q_nope_h, then q_pe_h.
  void absorb_queries(const MlaLayerWeights& w, int64_t n);
  // s_.attn from s_.lat: per head W_UV_h o_h.
  void expand_values(const MlaLayerWeights& w, int64_t n);
  // out[t][h] (ld_out floats per token) = mats[h] . in[t][h] (ld_in floats per
  // token, mats[h].cols() read from each head's start) for every head, all
  // heads' products in one parallel region reading `in` where it lies.
  void per_head_products(const std::vector<TensorView>& mats, const float* in, int64_t ld_in, float* out,
                         int64_t ld_out, int64_t n);
  // `moe`: DeepSeekMoE, counted as router layer `layer` when it is one of the
  // model's blocks; else dense. next_norm: the next block's input norm (null: none).
  // With a profile, timed into its row `layer`. `pool`: the MoE routing's.
  void feed_forward_block(const MlaLayerWeights& w, int layer, bool moe, const std::vector<float>* next_norm,
                          int64_t n, ThreadPool& pool, LayerProfile* profile);

  bool splits_heads() const { return tp_ != nullptr && tp_->size() > 1; }
  // Tensor parallel: the whole [n][splits.back()] rows from every rank's columns of
  // `part`. The collective reads and writes the backend's buffers in place (host
  // memory on the CPU backend).
  const float* gather(const float* part, int64_t n, const std::vector<int64_t>& splits, DeviceBuffer& whole);

  std::unique_ptr<ModelSource> src_;
  ModelConfig config_;
  ExpertShard experts_;
  dist::Communicator* tp_ = nullptr;  // null or a group of one: every head and column
  MlaShard shard_;                    // this rank's heads and FFN columns
  // Tensor parallel: every rank's first column (+ the end) of the heads' outputs
  // (v_head_dim each), of the dense FFN and of the shared experts.
  std::vector<int64_t> head_splits_, ffn_splits_, shared_splits_;
  DeepseekWeights weights_;
  std::vector<float> inv_freq_;  // qk_rope / 2 YaRN frequencies
  float rope_mscale_ = 1.0f;     // YaRN cos/sin factor
  std::unique_ptr<ComputeBackend> backend_;  // declared before the buffers it frees (moe_'s, s_'s)
  std::unique_ptr<MoeFeedForward> moe_;  // null for a dense model
  // Shaped from config_, which is declared (so initialized) before it.
  RouterStats router_stats_{config_.n_layers, config_.moe.leading_dense_layers, config_.moe.n_experts};
  Scratch s_;
  std::unique_ptr<Mtp> mtp_;        // null until mtp() loads it
  std::vector<float> last_hidden_;  // [n][hidden] while the MTP module is loaded
  std::unique_ptr<LayerProfile> profile_;  // null unless asked for (layer_profile())
};

}  // namespace db

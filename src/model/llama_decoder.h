// The llama-family decoder (llama, qwen2): pre-norm blocks of grouped-query
// attention with RoPE (optional q/k/v biases) and a SwiGLU feed-forward.
#pragma once
#include <memory>
#include <vector>

#include "model/decoder_steps.h"
#include "model/llama_weights.h"
#include "model/model.h"
#include "model/model_source.h"

namespace db {

// Registry factory for "llama" and "qwen2".
std::unique_ptr<Model> make_llama_decoder(std::unique_ptr<ModelSource> src, ThreadPool* load_pool);

class LlamaDecoder : public Model {
 public:
  // Weights are repacked on `load_pool` when given (see load_llama_weights).
  LlamaDecoder(std::unique_ptr<ModelSource> src, ModelConfig config, ThreadPool* load_pool = nullptr);

  const ModelConfig& config() const override { return config_; }
  // KeyValue: K and V of n_kv_heads * head_dim each.
  KVCacheShape kv_cache_shape() const override;
  void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
               std::vector<float>& logits) override;

 private:
  // Activations of one step besides DecoderScratch's (grown, never shrunk).
  struct Scratch : DecoderScratch {
    std::vector<float> q;     // [n_tokens][n_heads * head_dim]
    std::vector<float> k;     // [n_tokens][n_kv_heads * head_dim]
    std::vector<float> v;     // [n_tokens][n_kv_heads * head_dim]
    std::vector<float> attn;  // [n_tokens][n_heads * head_dim]
  };

  void reserve(int64_t n_tokens, int64_t n_logits);
  // Each block reads its normed input from s_.xn, adds its output to the
  // residual s_.x, and leaves the next block's normed input in s_.xn.
  void attention_block(int layer, const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool);
  void feed_forward_block(int layer, int64_t n_tokens, ThreadPool& pool);

  std::unique_ptr<ModelSource> src_;  // keeps the mapped weights alive
  ModelConfig config_;
  LlamaWeights weights_;
  std::vector<float> inv_freq_;  // RoPE frequencies, rope_dims / 2
  float rope_mscale_ = 1.0f;
  Scratch s_;
};

}  // namespace db

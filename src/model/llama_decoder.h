// The llama-family decoder (llama, qwen2): pre-norm blocks of grouped-query
// attention with RoPE (optional q/k/v biases) and a SwiGLU feed-forward.
#pragma once
#include <memory>
#include <vector>

#include "backend/compute_backend.h"
#include "dist/communicator.h"
#include "model/decoder_steps.h"
#include "model/llama_weights.h"
#include "model/model.h"
#include "model/model_source.h"

namespace db {

// Registry factory for "llama" and "qwen2".
std::unique_ptr<Model> make_llama_decoder(std::unique_ptr<ModelSource> src, ThreadPool* load_pool);
// One rank's shard of a llama / qwen2 model split across the tensor-parallel group
// `tp` (every rank of it calls forward with the same step): see LlamaDecoder.
std::unique_ptr<Model> make_llama_decoder_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                                dist::Communicator& tp,
                                                dist::ShardJoin join = dist::ShardJoin::Gather);

class LlamaDecoder : public Model {
 public:
  // Weights are repacked on `load_pool` when given (see load_llama_weights).
  // With a tensor-parallel group `tp` of several ranks, this rank holds the heads and
  // feed-forward columns of llama_shard_plan (model/llama_weights.h), and every rank
  // ends each block with the whole residual stream. `join` says how: Gather
  // all-gathers the heads' attention outputs and the feed-forward activations
  // (dist::all_gather_columns) before the whole attn_output / ffn_down; Reduce
  // all-reduces the partial outputs of the split attn_output / ffn_down.
  // config() stays the whole model's.
  LlamaDecoder(std::unique_ptr<ModelSource> src, ModelConfig config, ThreadPool* load_pool = nullptr,
               dist::Communicator* tp = nullptr, dist::ShardJoin join = dist::ShardJoin::Gather);

  const ModelConfig& config() const override { return config_; }
  // KeyValue: K and V of this rank's KV heads (all of them without a group), head_dim each.
  KVCacheShape kv_cache_shape() const override;
  ComputeBackend* kv_memory() const override;
  void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
               std::vector<float>& logits) override;

 private:
  // Activations of one step besides DecoderScratch's (grown, never shrunk).
  struct Scratch : DecoderScratch {
    DeviceBuffer q;     // [n_tokens][the rank's heads * head_dim]
    DeviceBuffer k;     // [n_tokens][the rank's KV heads * head_dim]
    DeviceBuffer v;     // [n_tokens][the rank's KV heads * head_dim]
    DeviceBuffer attn;  // [n_tokens][the rank's heads * head_dim]
    DeviceBuffer attn_all, ffn_all;  // Gather: [n_tokens][all heads * head_dim], [n_tokens][ffn_hidden]
    std::vector<float> gather;       // Gather: the collective's host scratch
  };

  void reserve(int64_t n_tokens, int64_t n_logits);
  // Each block reads its normed input from s_.xn, adds its output to the
  // residual s_.x, and leaves the next block's normed input in s_.xn.
  void attention_block(int layer, const Batch& batch, const AttentionMetadata& attn, KVStore& kv);
  void feed_forward_block(int layer, int64_t n_tokens);

  bool split() const { return tp_ != nullptr && tp_->size() > 1; }
  bool gathers() const { return split() && plan_.join == dist::ShardJoin::Gather; }
  // Reduce: sums a block's partial [n_tokens][hidden] output over the group (no-op otherwise).
  void reduce_block_output(int64_t n_tokens);
  // Gather: the whole [n_tokens][splits.back()] rows from every rank's columns of `part`.
  // The collective reads and writes the backend's buffers in place (host memory on the CPU backend).
  const float* gather(const float* part, int64_t n_tokens, const std::vector<int64_t>& splits, DeviceBuffer& whole);

  std::unique_ptr<ModelSource> src_;  // keeps the mapped weights alive
  ModelConfig config_;
  dist::Communicator* tp_ = nullptr;  // null or a group of one: the whole model
  dist::ShardPlan plan_;              // this rank's heads and feed-forward columns
  std::vector<int64_t> head_splits_, ffn_splits_;  // every rank's first column (+ the end), for Gather
  LlamaWeights weights_;
  std::vector<float> inv_freq_;  // RoPE frequencies, rope_dims / 2
  float rope_mscale_ = 1.0f;
  std::unique_ptr<ComputeBackend> backend_;  // declared before the buffers it frees
  Scratch s_;
};

}  // namespace db

#include "model/llama_decoder.h"

#include <cmath>

#include "backend/backend_device.h"
#include "dist/gather_columns.h"
#include "model/rope_frequencies.h"
#include "util/error.h"

namespace db {

namespace {

// Hands every weight of `w` to the backend once (ComputeBackend::prepare_*).
void prepare_llama_weights(ComputeBackend& b, LlamaWeights& w) {
  prepare_global_weights(b, w);
  for (LlamaLayerWeights& l : w.layers) {
    for (TensorView* m : {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up, &l.ffn_down})
      *m = b.prepare_matrix(*m);
    for (const std::vector<float>* v : {&l.attn_norm, &l.q_bias, &l.k_bias, &l.v_bias, &l.ffn_norm})
      b.prepare_vector(*v);
  }
}

}  // namespace

std::unique_ptr<Model> make_llama_decoder(std::unique_ptr<ModelSource> src, ThreadPool* load_pool) {
  ModelConfig config = read_model_config(*src);
  return std::make_unique<LlamaDecoder>(std::move(src), std::move(config), load_pool);
}

std::unique_ptr<Model> make_llama_decoder_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                                dist::Communicator& tp, dist::ShardJoin join) {
  ModelConfig config = read_model_config(*src);
  return std::make_unique<LlamaDecoder>(std::move(src), std::move(config), load_pool, &tp, join);
}

LlamaDecoder::LlamaDecoder(std::unique_ptr<ModelSource> src, ModelConfig config, ThreadPool* load_pool,
                           dist::Communicator* tp, dist::ShardJoin join)
    : src_(std::move(src)), config_(std::move(config)), tp_(tp) {
  const int size = tp_ ? tp_->size() : 1;
  plan_ = llama_shard_plan(*src_, config_, tp_ ? tp_->rank() : 0, size, join);
  for (int r = 0; r < size && gathers(); ++r) {
    const dist::ShardPlan p = r == plan_.rank ? plan_ : llama_shard_plan(*src_, config_, r, size, join);
    head_splits_.push_back(int64_t{p.head_begin} * config_.head_dim);
    ffn_splits_.push_back(p.ffn_begin);
  }
  if (gathers()) {
    head_splits_.push_back(int64_t{config_.n_heads} * config_.head_dim);
    ffn_splits_.push_back(config_.ffn_hidden);
  }
  weights_ = load_llama_weights(*src_, config_, load_pool, plan_);
  inv_freq_ = rope_inv_freq(config_);
  rope_mscale_ = rope_mscale(config_);
  backend_ = make_backend(src_->device());
  prepare_llama_weights(*backend_, weights_);
  backend_->prepare_vector(inv_freq_);
}

ComputeBackend* LlamaDecoder::kv_memory() const {
  return src_->device() == Device::Cpu ? nullptr : backend_.get();
}

KVCacheShape LlamaDecoder::kv_cache_shape() const {
  return KVCacheShape::key_value(config_.n_layers, plan_.n_kv_heads(), config_.head_dim);
}

void LlamaDecoder::reserve(int64_t n, int64_t n_logits) {
  const int64_t q_dim = int64_t{plan_.n_heads()} * config_.head_dim;
  const int64_t kv_dim = int64_t{plan_.n_kv_heads()} * config_.head_dim;
  ComputeBackend& b = *backend_;
  s_.reserve(b, n, n_logits, config_.hidden, plan_.ffn_cols(), config_.rope_dims / 2);
  b.grow(s_.q, n * q_dim);
  b.grow(s_.k, n * kv_dim);
  b.grow(s_.v, n * kv_dim);
  b.grow(s_.attn, n * q_dim);
  if (gathers()) {
    b.grow(s_.attn_all, n * config_.n_heads * config_.head_dim);
    b.grow(s_.ffn_all, n * config_.ffn_hidden);
  }
}

void LlamaDecoder::attention_block(int layer, const Batch& batch, const AttentionMetadata& attn, KVStore& kv) {
  ComputeBackend& b = *backend_;
  const LlamaLayerWeights& w = weights_.layers[static_cast<size_t>(layer)];
  const int64_t n = batch.num_tokens(), hd = config_.head_dim;
  const int n_heads = plan_.n_heads(), n_kv_heads = plan_.n_kv_heads();
  const int64_t q_dim = n_heads * hd, kv_dim = n_kv_heads * hd;
  const kernels::MatmulTask qkv[3] = {{&w.attn_q, s_.q.data()}, {&w.attn_k, s_.k.data()}, {&w.attn_v, s_.v.data()}};
  b.matmul_group(qkv, 3, s_.xn.data(), n);

  if (!w.q_bias.empty()) b.add_bias(s_.q.data(), q_dim, w.q_bias, n);
  if (!w.k_bias.empty()) b.add_bias(s_.k.data(), kv_dim, w.k_bias, n);
  if (!w.v_bias.empty()) b.add_bias(s_.v.data(), kv_dim, w.v_bias, n);
  const RopeHeads rope[2] = {{s_.q.data(), q_dim, n_heads, config_.head_dim},
                             {s_.k.data(), kv_dim, n_kv_heads, config_.head_dim}};
  b.rope(rope, 2, n, {s_.rope_cos.data(), s_.rope_sin.data(), config_.rope_dims / 2, config_.rope_style});

  b.write_kv(s_.k.data(), s_.v.data(), kv_dim, n, attn.slot_mapping.data(),
             kernels::PagedKVLayerOut::key_value(kv.k_layer(layer), kv.v_layer(layer), kv.dtype(), kv.num_slots(),
                                                 kv_dim));
  const auto layer_kv = kernels::PagedKVLayer::key_value(kv.k_layer(layer), kv.v_layer(layer), kv.dtype(),
                                                         kv.num_slots(), n_kv_heads, config_.head_dim);
  const kernels::AttentionQueries queries{s_.q.data(),
                                          n_heads,
                                          batch.num_seqs(),
                                          batch.query_start.data(),
                                          batch.positions.data(),
                                          attn.block_tables.data(),
                                          attn.block_size,
                                          1.0f / std::sqrt(static_cast<float>(hd))};
  b.paged_attention(queries, layer_kv, s_.attn.data());

  const float* heads = gathers() ? gather(s_.attn.data(), n, head_splits_, s_.attn_all) : s_.attn.data();
  b.matmul(w.attn_output, heads, n, s_.xn.data());
  reduce_block_output(n);
  b.add_rows_then_norm(s_.x.data(), s_.xn.data(), w.ffn_norm.data(), n, config_.hidden, config_.rms_eps);
}

void LlamaDecoder::feed_forward_block(int layer, int64_t n) {
  ComputeBackend& b = *backend_;
  const LlamaLayerWeights& w = weights_.layers[static_cast<size_t>(layer)];
  if (gathers()) {  // dense_feed_forward with the activations gathered between its two products
    b.matmul_swiglu(w.ffn_gate, w.ffn_up, s_.xn.data(), n, s_.gate.data(), s_.up.data());
    b.matmul(w.ffn_down, gather(s_.gate.data(), n, ffn_splits_, s_.ffn_all), n, s_.xn.data());
  } else {
    dense_feed_forward(b, w.ffn_gate, w.ffn_up, w.ffn_down, n, s_);
    reduce_block_output(n);
  }
  const bool last = layer + 1 == config_.n_layers;
  add_block_output(b, s_, last ? nullptr : &weights_.layers[static_cast<size_t>(layer) + 1].attn_norm, n,
                   config_.hidden, config_.rms_eps);
}

const float* LlamaDecoder::gather(const float* part, int64_t n, const std::vector<int64_t>& splits,
                                  DeviceBuffer& whole) {
  dist::all_gather_columns(*tp_, part, n, splits, whole.data(), s_.gather);
  return whole.data();
}

void LlamaDecoder::reduce_block_output(int64_t n) {
  if (!split() || gathers()) return;
  tp_->all_reduce_sum(std::span<float>(s_.xn.data(), static_cast<size_t>(n * config_.hidden)));
}

void LlamaDecoder::forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
                           std::vector<float>& logits) {
  const int64_t n = check_step(batch, attn, kv, kv_cache_shape(), config_.vocab, logits);
  if (n == 0) return;
  ComputeBackend& b = *backend_;
  b.set_host_pool(pool);
  reserve(n, static_cast<int64_t>(batch.logits_indices.size()));
  start_step(b, batch, weights_.token_embd, inv_freq_, config_.rope_dims / 2, rope_mscale_,
             weights_.layers.front().attn_norm, config_.hidden, config_.rms_eps, s_);
  for (int layer = 0; layer < config_.n_layers; ++layer) {
    attention_block(layer, batch, attn, kv);
    feed_forward_block(layer, n);
  }
  project_logits(b, batch, weights_, config_.hidden, config_.vocab, config_.rms_eps, s_, logits);
}

}  // namespace db

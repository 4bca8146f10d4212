#include "model/deepseek_decoder.h"

#include <cstdio>
#include <optional>
#include <string>

#include "backend/backend_device.h"
#include "dist/communicator.h"
#include "dist/gather_columns.h"
#include "model/rope_frequencies.h"
#include "util/error.h"

namespace db {

namespace {

// Hands every weight of one block to the backend once (ComputeBackend::prepare_*).
void prepare_mla_layer_weights(ComputeBackend& b, MlaLayerWeights& w) {
  for (TensorView* m : {&w.attn_q, &w.attn_q_a, &w.attn_q_b, &w.attn_kv_a, &w.attn_output, &w.ffn_gate, &w.ffn_up,
                        &w.ffn_down})
    *m = b.prepare_matrix(*m);
  for (std::vector<TensorView>* heads : {&w.uk_t, &w.uv})
    for (TensorView& m : *heads) m = b.prepare_matrix(m);
  for (const std::vector<float>* v : {&w.attn_norm, &w.q_a_norm, &w.kv_a_norm, &w.ffn_norm}) b.prepare_vector(*v);
  if (!w.moe.experts.empty()) prepare_moe_layer_weights(b, w.moe);
}

void prepare_mtp_weights(ComputeBackend& b, MtpWeights& m) {
  prepare_mla_layer_weights(b, m.block);
  for (TensorView* v : {&m.eh_proj, &m.embed, &m.head}) *v = b.prepare_matrix(*v);
  for (const std::vector<float>* v : {&m.enorm, &m.hnorm, &m.head_norm}) b.prepare_vector(*v);
}

}  // namespace

std::unique_ptr<Model> make_deepseek_decoder(std::unique_ptr<ModelSource> src, ThreadPool* load_pool) {
  ModelConfig config = read_model_config(*src);
  return std::make_unique<DeepseekDecoder>(std::move(src), std::move(config), load_pool);
}

std::unique_ptr<Model> make_deepseek_decoder_expert_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                                          dist::Communicator& group) {
  ModelConfig config = read_model_config(*src);
  return std::make_unique<DeepseekDecoder>(std::move(src), std::move(config), load_pool, &group);
}

std::unique_ptr<Model> make_deepseek_decoder_shard(std::unique_ptr<ModelSource> src, ThreadPool* load_pool,
                                                   dist::Communicator& tensor_group, dist::ShardJoin join,
                                                   dist::Communicator* expert_group) {
  if (join != dist::ShardJoin::Gather)
    throw Error(src->path() + ": --tensor-parallel-join " + dist::shard_join_name(join) +
                ": deepseek2 models are split with the gather join only");
  ModelConfig config = read_model_config(*src);
  return std::make_unique<DeepseekDecoder>(std::move(src), std::move(config), load_pool, expert_group, &tensor_group);
}

DeepseekDecoder::DeepseekDecoder(std::unique_ptr<ModelSource> src, ModelConfig config, ThreadPool* load_pool,
                                 dist::Communicator* expert_group, dist::Communicator* tensor_group)
    : src_(std::move(src)), config_(std::move(config)), tp_(tensor_group) {
  if (!config_.mla.enabled()) throw Error(src_->path() + ": DeepseekDecoder needs MLA (kv_lora_rank > 0)");
  if (expert_group != nullptr && expert_group->size() > 1 && !config_.moe.enabled())
    throw Error(src_->path() + ": --expert-parallel-size " + std::to_string(expert_group->size()) +
                ": the model has no routed experts to split");
  try {
    experts_ = make_expert_shard(config_.moe.enabled() ? config_.moe.n_experts : 1, expert_group);
  } catch (const Error& e) {
    throw Error(src_->path() + ": " + e.what());
  }
  shard_ = whole_mla_shard(config_);
  if (splits_heads()) {
    const int64_t shared = shard_.shared_end;
    try {
      shard_ = make_mla_shard(config_.n_heads, config_.ffn_hidden, shared, tp_->rank(), tp_->size());
    } catch (const Error& e) {
      throw Error(src_->path() + ": " + e.what());
    }
    head_splits_ = even_split_columns(config_.n_heads, config_.mla.v_head_dim, tp_->size());
    ffn_splits_ = even_split_columns(config_.ffn_hidden, 1, tp_->size());
    shared_splits_ = even_split_columns(shared, 1, tp_->size());
  }
  weights_ = load_deepseek_weights(*src_, config_, load_pool, experts_, shard_);
  inv_freq_ = rope_inv_freq(config_);
  rope_mscale_ = rope_mscale(config_);
  backend_ = make_backend(src_->device());
  prepare_global_weights(*backend_, weights_);
  for (MlaLayerWeights& l : weights_.layers) prepare_mla_layer_weights(*backend_, l);
  backend_->prepare_vector(inv_freq_);
  if (config_.moe.enabled()) moe_ = std::make_unique<MoeFeedForward>(config_.moe, config_.hidden, experts_);
  if (moe_ && splits_heads() && shard_.shared_end > shard_.shared_begin)
    moe_->set_shared_join(shard_.shared_end - shard_.shared_begin, [this](const float* part, int64_t n) {
      backend_->grow(s_.shared_all, n * shared_splits_.back());
      return gather(part, n, shared_splits_, s_.shared_all);
    });
  if (experts_.split()) router_stats_.expert_parallel_size = experts_.group->size();
  if (layer_profile_requested()) profile_ = std::make_unique<LayerProfile>(config_.n_layers);
}

ComputeBackend* DeepseekDecoder::kv_memory() const {
  return src_->device() == Device::Cpu ? nullptr : backend_.get();
}

KVCacheShape DeepseekDecoder::kv_cache_shape() const {
  return KVCacheShape::latent(config_.n_layers, config_.mla.kv_lora_rank, config_.mla.qk_rope_dim);
}

void DeepseekDecoder::reserve(int64_t n, int64_t n_logits) {
  const MlaConfig& a = config_.mla;
  const int64_t heads = shard_.n_heads(), row = a.kv_lora_rank + a.qk_rope_dim;
  ComputeBackend& b = *backend_;
  s_.reserve(b, n, n_logits, config_.hidden, config_.ffn_hidden, a.qk_rope_dim / 2);
  if (splits_heads()) {
    b.grow(s_.attn_all, n * config_.n_heads * a.v_head_dim);
    b.grow(s_.ffn_all, n * config_.ffn_hidden);
  }
  b.grow(s_.q_a, n * a.q_lora_rank);
  b.grow(s_.q, n * heads * a.qk_head_dim());
  b.grow(s_.kv_a, n * row);
  b.grow(s_.q_abs, n * heads * row);
  b.grow(s_.lat, n * heads * a.kv_lora_rank);
  b.grow(s_.attn, n * heads * a.v_head_dim);
}

void DeepseekDecoder::project_qkv(const MlaLayerWeights& w, int64_t n) {
  ComputeBackend& b = *backend_;
  const MlaConfig& a = config_.mla;
  const int heads = shard_.n_heads();
  const int64_t row = a.kv_lora_rank + a.qk_rope_dim, q_dim = int64_t{heads} * a.qk_head_dim();
  if (a.q_lora_rank > 0) {
    const kernels::MatmulTask tasks[2] = {{&w.attn_q_a, s_.q_a.data()}, {&w.attn_kv_a, s_.kv_a.data()}};
    b.matmul_group(tasks, 2, s_.xn.data(), n);
    b.norm_rows(s_.q_a.data(), a.q_lora_rank, w.q_a_norm.data(), n, a.q_lora_rank, config_.mla_norm_eps,
                s_.q_a.data(), a.q_lora_rank);
    b.matmul(w.attn_q_b, s_.q_a.data(), n, s_.q.data());
  } else {
    const kernels::MatmulTask tasks[2] = {{&w.attn_q, s_.q.data()}, {&w.attn_kv_a, s_.kv_a.data()}};
    b.matmul_group(tasks, 2, s_.xn.data(), n);
  }
  b.norm_rows(s_.kv_a.data(), row, w.kv_a_norm.data(), n, a.kv_lora_rank, config_.mla_norm_eps, s_.kv_a.data(), row);
  // The rope part is the last qk_rope dims of each q head, and all of k_pe.
  const RopeHeads rope[2] = {{s_.q.data() + a.qk_nope_dim, q_dim, heads, static_cast<int>(a.qk_head_dim())},
                             {s_.kv_a.data() + a.kv_lora_rank, row, 1, a.qk_rope_dim}};
  b.rope(rope, 2, n, {s_.rope_cos.data(), s_.rope_sin.data(), a.qk_rope_dim / 2, config_.rope_style});
}

void DeepseekDecoder::per_head_products(const std::vector<TensorView>& mats, const float* in, int64_t ld_in, float* out,
                                        int64_t ld_out, int64_t n) {
  const auto heads = static_cast<int64_t>(mats.size());
  s_.head_tasks.resize(static_cast<size_t>(heads));
  for (int64_t h = 0; h < heads; ++h)
    s_.head_tasks[static_cast<size_t>(h)] = {&mats[static_cast<size_t>(h)], out + h * (ld_out / heads), ld_out};
  backend_->matmul_heads(s_.head_tasks.data(), static_cast<int>(heads), in, ld_in, ld_in / heads, n);
}

void DeepseekDecoder::absorb_queries(const MlaLayerWeights& w, int64_t n) {
  const MlaConfig& a = config_.mla;
  const int heads = shard_.n_heads();
  const int64_t qk = a.qk_head_dim(), c = a.kv_lora_rank, row = c + a.qk_rope_dim;
  per_head_products(w.uk_t, s_.q.data(), heads * qk, s_.q_abs.data(), heads * row, n);
  // q_pe after the absorbed part: it meets k_pe, the last qk_rope values of the cached row.
  backend_->copy_rows(s_.q.data() + a.qk_nope_dim, qk, s_.q_abs.data() + c, row, n * heads, a.qk_rope_dim);
}

void DeepseekDecoder::expand_values(const MlaLayerWeights& w, int64_t n) {
  const MlaConfig& a = config_.mla;
  const int heads = shard_.n_heads();
  per_head_products(w.uv, s_.lat.data(), heads * a.kv_lora_rank, s_.attn.data(), heads * a.v_head_dim, n);
}

void DeepseekDecoder::attention_block(const MlaLayerWeights& w, int layer, const Batch& batch,
                                      const AttentionMetadata& attn, KVStore& kv, LayerProfile* profile) {
  ComputeBackend& b = *backend_;
  const MlaConfig& a = config_.mla;
  const int64_t n = batch.num_tokens(), row = a.kv_lora_rank + a.qk_rope_dim;
  std::optional<LayerTimer> timer(std::in_place, profile, layer, LayerBlock::AttnQkv);
  project_qkv(w, n);

  timer.emplace(profile, layer, LayerBlock::AttnCore);
  b.write_kv(s_.kv_a.data(), nullptr, row, n, attn.slot_mapping.data(),
             kernels::PagedKVLayerOut::keys_only(kv.k_layer(layer), kv.dtype(), kv.num_slots(), row));

  timer.emplace(profile, layer, LayerBlock::AttnAbsorb);
  absorb_queries(w, n);
  timer.emplace(profile, layer, LayerBlock::AttnCore);
  const auto layer_kv = kernels::PagedKVLayer::latent(kv.k_layer(layer), kv.dtype(), kv.num_slots(),
                                                      static_cast<int>(row), a.kv_lora_rank);
  const kernels::AttentionQueries queries{s_.q_abs.data(),         shard_.n_heads(),   batch.num_seqs(),
                                          batch.query_start.data(), batch.positions.data(), attn.block_tables.data(),
                                          attn.block_size,         a.softmax_scale};
  b.paged_attention(queries, layer_kv, s_.lat.data());
  timer.emplace(profile, layer, LayerBlock::AttnAbsorb);
  expand_values(w, n);

  timer.emplace(profile, layer, LayerBlock::AttnOut);
  const float* heads = splits_heads() ? gather(s_.attn.data(), n, head_splits_, s_.attn_all) : s_.attn.data();
  b.matmul(w.attn_output, heads, n, s_.xn.data());
  b.add_rows_then_norm(s_.x.data(), s_.xn.data(), w.ffn_norm.data(), n, config_.hidden, config_.rms_eps);
}

void DeepseekDecoder::feed_forward_block(const MlaLayerWeights& w, int layer, bool moe,
                                         const std::vector<float>* next_norm, int64_t n, ThreadPool& pool,
                                         LayerProfile* profile) {
  ComputeBackend& b = *backend_;
  if (moe) {
    moe_->forward(w.moe, s_.xn.data(), n, s_.xn.data(), b, pool, profile, layer);
    LayerTimer timer(profile, layer, LayerBlock::Router);
    if (layer < config_.n_layers) router_stats_.record(layer, moe_->tokens_per_expert());
  } else {
    LayerTimer timer(profile, layer, LayerBlock::DenseFfn);
    if (splits_heads()) {  // dense_feed_forward with the activations gathered between its two products
      b.matmul_swiglu(w.ffn_gate, w.ffn_up, s_.xn.data(), n, s_.gate.data(), s_.up.data());
      b.matmul(w.ffn_down, gather(s_.gate.data(), n, ffn_splits_, s_.ffn_all), n, s_.xn.data());
    } else {
      dense_feed_forward(b, w.ffn_gate, w.ffn_up, w.ffn_down, n, s_);
    }
  }
  LayerTimer timer(profile, layer, moe ? LayerBlock::Shared : LayerBlock::DenseFfn);
  add_block_output(b, s_, next_norm, n, config_.hidden, config_.rms_eps);
}

const float* DeepseekDecoder::gather(const float* part, int64_t n, const std::vector<int64_t>& splits,
                                     DeviceBuffer& whole) {
  dist::all_gather_columns(*tp_, part, n, splits, whole.data(), s_.gather);
  return whole.data();
}

void DeepseekDecoder::forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
                              std::vector<float>& logits) {
  const int64_t n = check_step(batch, attn, kv, kv_cache_shape(), config_.vocab, logits);
  if (n == 0) return;
  LayerProfile* const profile = profile_.get();
  if (profile) profile->begin_step(n, batch.num_seqs());
  ComputeBackend& b = *backend_;
  b.set_host_pool(pool);
  reserve(n, static_cast<int64_t>(batch.logits_indices.size()));
  std::optional<LayerTimer> timer(std::in_place, profile, config_.n_layers, LayerBlock::Embed);
  start_step(b, batch, weights_.token_embd, inv_freq_, config_.mla.qk_rope_dim / 2, rope_mscale_,
             weights_.layers.front().attn_norm, config_.hidden, config_.rms_eps, s_);
  timer.reset();
  for (int layer = 0; layer < config_.n_layers; ++layer) {
    const MlaLayerWeights& w = weights_.layers[static_cast<size_t>(layer)];
    attention_block(w, layer, batch, attn, kv, profile);
    const bool last = layer + 1 == config_.n_layers;
    feed_forward_block(w, layer, config_.moe.is_moe_layer(layer),
                       last ? nullptr : &weights_.layers[static_cast<size_t>(layer) + 1].attn_norm, n, pool, profile);
  }
  timer.emplace(profile, config_.n_layers, LayerBlock::Head);  // with the MTP module's final norm
  if (mtp_) {  // the MTP drafter reads every token's final hidden state
    const int64_t h = config_.hidden;
    b.grow(s_.hidden, n * h);
    b.norm_rows(s_.x.data(), h, weights_.output_norm.data(), n, h, config_.rms_eps, s_.hidden.data(), h);
    last_hidden_.resize(static_cast<size_t>(n * h));
    b.to_host(s_.hidden.data(), last_hidden_.data(), n * h);
  }
  project_logits(b, batch, weights_, config_.hidden, config_.vocab, config_.rms_eps, s_, logits);
  timer.reset();
  if (profile) profile->end_step();
}

class DeepseekDecoder::Mtp final : public MtpModule {
 public:
  explicit Mtp(DeepseekDecoder& d) : d_(d) {}

  KVCacheShape kv_cache_shape() const override {
    const MlaConfig& a = d_.config_.mla;
    return KVCacheShape::latent(1, a.kv_lora_rank, a.qk_rope_dim);
  }
  int64_t hidden_size() const override { return d_.config_.hidden; }

  void forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, const float* hidden_in,
               ThreadPool& pool, std::vector<float>& hidden_out) override {
    const ModelConfig& c = d_.config_;
    const MtpWeights& m = *d_.weights_.mtp;
    const int64_t n = check_step(batch, attn, kv, kv_cache_shape(), c.vocab, unused_logits_), h = c.hidden;
    hidden_out.resize(static_cast<size_t>(n * h));
    if (n == 0) return;
    ComputeBackend& b = *d_.backend_;
    b.set_host_pool(pool);
    DecoderScratch& s = d_.s_;
    d_.reserve(n, 0);
    b.grow(cat_, n * 2 * h);
    b.grow(hidden_, n * h);
    // cat_ rows: [enorm(embedding) | hnorm(hidden state)].
    b.embed_rows(m.embed, batch.token_ids.data(), n, cat_.data(), 2 * h);
    b.norm_rows(cat_.data(), 2 * h, m.enorm.data(), n, h, c.rms_eps, cat_.data(), 2 * h);
    b.to_device(hidden_in, hidden_.data(), n * h);
    b.norm_rows(hidden_.data(), h, m.hnorm.data(), n, h, c.rms_eps, cat_.data() + h, 2 * h);
    b.matmul(m.eh_proj, cat_.data(), n, s.x.data());
    rope_tables(b, batch, d_.inv_freq_, c.mla.qk_rope_dim / 2, d_.rope_mscale_, s);
    b.norm_rows(s.x.data(), h, m.block.attn_norm.data(), n, h, c.rms_eps, s.xn.data(), h);
    d_.attention_block(m.block, 0, batch, attn, kv, nullptr);
    d_.feed_forward_block(m.block, c.n_layers, c.moe.is_moe_layer(c.n_layers - 1), nullptr, n, pool, nullptr);
    b.to_host(s.x.data(), hidden_out.data(), n * h);
  }

  void project(const float* hidden, int64_t n, ThreadPool& pool, std::vector<float>& logits) override {
    const ModelConfig& c = d_.config_;
    const MtpWeights& m = *d_.weights_.mtp;
    logits.resize(static_cast<size_t>(n * c.vocab));
    if (n == 0) return;
    ComputeBackend& b = *d_.backend_;
    b.set_host_pool(pool);
    b.grow(hidden_, n * c.hidden);
    b.to_device(hidden, hidden_.data(), n * c.hidden);
    b.norm_rows(hidden_.data(), c.hidden, m.head_norm.data(), n, c.hidden, c.rms_eps, hidden_.data(), c.hidden);
    b.matmul_to_host(m.head, hidden_.data(), n, logits.data());
  }

 private:
  DeepseekDecoder& d_;
  DeviceBuffer cat_;     // [n][2 * hidden] eh_proj's input
  DeviceBuffer hidden_;  // [n][hidden] the hidden states handed in (forward), the head's input (project)
  std::vector<float> unused_logits_;
};

MtpModule* DeepseekDecoder::mtp(ThreadPool* load_pool) {
  if (mtp_) return mtp_.get();
  if (experts_.split())
    throw Error(src_->path() + ": the multi-token-prediction layer does not run with --expert-parallel-size above 1");
  if (splits_heads())
    throw Error(src_->path() + ": the multi-token-prediction layer does not run with --tensor-parallel-size above 1");
  if (!has_mtp_layer(*src_, config_)) return nullptr;
  load_mtp_weights(*src_, config_, weights_, load_pool);
  prepare_mtp_weights(*backend_, *weights_.mtp);
  mtp_ = std::make_unique<Mtp>(*this);
  return mtp_.get();
}

DeepseekDecoder::~DeepseekDecoder() {
  if (!profile_) return;
  const std::string table = profile_->table();
  if (!table.empty()) std::fputs(table.c_str(), stderr);
}

}  // namespace db

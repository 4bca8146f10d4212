#include "model/deepseek_decoder.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "kernels/cpu/attention_kv_write.h"
#include "kernels/dequantize.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/rope.h"
#include "dist/communicator.h"
#include "dist/gather_columns.h"
#include "kernels/matmul.h"
#include "model/rope_frequencies.h"
#include "util/error.h"

namespace db {

namespace {

// Below this many floats a copy runs on the calling thread: a fork costs more.
constexpr int64_t kSerialCopyFloats = 16384;

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
  if (config_.moe.enabled()) moe_ = std::make_unique<MoeFeedForward>(config_.moe, config_.hidden, experts_);
  if (moe_ && splits_heads() && shard_.shared_end > shard_.shared_begin)
    moe_->set_shared_join(shard_.shared_end - shard_.shared_begin, [this](const float* part, int64_t n) {
      grow(s_.shared_all, n * shared_splits_.back());
      return gather(part, n, shared_splits_, s_.shared_all);
    });
  if (experts_.split()) router_stats_.expert_parallel_size = experts_.group->size();
  if (layer_profile_requested()) profile_ = std::make_unique<LayerProfile>(config_.n_layers);
}

KVCacheShape DeepseekDecoder::kv_cache_shape() const {
  return KVCacheShape::latent(config_.n_layers, config_.mla.kv_lora_rank, config_.mla.qk_rope_dim);
}

void DeepseekDecoder::reserve(int64_t n, int64_t n_logits) {
  const MlaConfig& a = config_.mla;
  const int64_t heads = shard_.n_heads(), row = a.kv_lora_rank + a.qk_rope_dim;
  s_.reserve(n, n_logits, config_.hidden, config_.ffn_hidden, a.qk_rope_dim / 2);
  if (splits_heads()) {
    grow(s_.attn_all, n * config_.n_heads * a.v_head_dim);
    grow(s_.ffn_all, n * config_.ffn_hidden);
  }
  grow(s_.q_a, n * a.q_lora_rank);
  grow(s_.q, n * heads * a.qk_head_dim());
  grow(s_.kv_a, n * row);
  grow(s_.q_abs, n * heads * row);
  grow(s_.lat, n * heads * a.kv_lora_rank);
  grow(s_.attn, n * heads * a.v_head_dim);
}

void DeepseekDecoder::project_qkv(const MlaLayerWeights& w, int64_t n, ThreadPool& pool) {
  const MlaConfig& a = config_.mla;
  const int heads = shard_.n_heads();
  const int64_t row = a.kv_lora_rank + a.qk_rope_dim, q_dim = int64_t{heads} * a.qk_head_dim();
  if (a.q_lora_rank > 0) {
    const kernels::MatmulTask tasks[2] = {{&w.attn_q_a, s_.q_a.data()}, {&w.attn_kv_a, s_.kv_a.data()}};
    kernels::matmul_group(tasks, 2, s_.xn.data(), n, pool);
    norm_rows(s_.q_a.data(), w.q_a_norm, n, a.q_lora_rank, config_.mla_norm_eps, s_.q_a.data(), pool);
    kernels::matmul(w.attn_q_b, s_.q_a.data(), n, s_.q.data(), pool);
  } else {
    const kernels::MatmulTask tasks[2] = {{&w.attn_q, s_.q.data()}, {&w.attn_kv_a, s_.kv_a.data()}};
    kernels::matmul_group(tasks, 2, s_.xn.data(), n, pool);
  }
  const int n_pairs = a.qk_rope_dim / 2;
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      float* kv = s_.kv_a.data() + t * row;
      kernels::rms_norm(kv, w.kv_a_norm.data(), a.kv_lora_rank, config_.mla_norm_eps, kv);
      const float* cos_v = s_.rope_cos.data() + t * n_pairs;
      const float* sin_v = s_.rope_sin.data() + t * n_pairs;
      // The rope part is the last qk_rope dims of each q head, and all of k_pe.
      kernels::rope_rotate(s_.q.data() + t * q_dim + a.qk_nope_dim, heads, a.qk_head_dim(), n_pairs,
                           config_.rope_style, cos_v, sin_v);
      kernels::rope_rotate(kv + a.kv_lora_rank, 1, a.qk_rope_dim, n_pairs, config_.rope_style, cos_v, sin_v);
    }
  });
}

void DeepseekDecoder::per_head_products(const std::vector<TensorView>& mats, const float* in, int64_t ld_in, float* out,
                                        int64_t ld_out, int64_t n, ThreadPool& pool) {
  const auto heads = static_cast<int64_t>(mats.size());
  s_.head_tasks.resize(static_cast<size_t>(heads));
  for (int64_t h = 0; h < heads; ++h)
    s_.head_tasks[static_cast<size_t>(h)] = {&mats[static_cast<size_t>(h)], out + h * (ld_out / heads), ld_out};
  kernels::matmul_heads(s_.head_tasks.data(), static_cast<int>(heads), in, ld_in, ld_in / heads, n, pool);
}

void DeepseekDecoder::absorb_queries(const MlaLayerWeights& w, int64_t n, ThreadPool& pool) {
  const MlaConfig& a = config_.mla;
  const int heads = shard_.n_heads();
  const int64_t qk = a.qk_head_dim(), c = a.kv_lora_rank, row = c + a.qk_rope_dim;
  per_head_products(w.uk_t, s_.q.data(), heads * qk, s_.q_abs.data(), heads * row, n, pool);
  // q_pe after the absorbed part: it meets k_pe, the last qk_rope values of the cached row.
  const auto copy_pe = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      for (int h = 0; h < heads; ++h)
        std::memcpy(s_.q_abs.data() + (t * heads + h) * row + c, s_.q.data() + (t * heads + h) * qk + a.qk_nope_dim,
                    static_cast<size_t>(a.qk_rope_dim) * sizeof(float));
  };
  if (n * heads * a.qk_rope_dim < kSerialCopyFloats) copy_pe(0, n); else pool.parallel_for(n, copy_pe);
}

void DeepseekDecoder::expand_values(const MlaLayerWeights& w, int64_t n, ThreadPool& pool) {
  const MlaConfig& a = config_.mla;
  const int heads = shard_.n_heads();
  per_head_products(w.uv, s_.lat.data(), heads * a.kv_lora_rank, s_.attn.data(), heads * a.v_head_dim, n, pool);
}

void DeepseekDecoder::attention_block(const MlaLayerWeights& w, int layer, const Batch& batch,
                                      const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
                                      LayerProfile* profile) {
  const MlaConfig& a = config_.mla;
  const int64_t n = batch.num_tokens(), row = a.kv_lora_rank + a.qk_rope_dim;
  std::optional<LayerTimer> timer(std::in_place, profile, layer, LayerBlock::AttnQkv);
  project_qkv(w, n, pool);

  // Rows go to distinct slots (check_batch verified the mapping), so the threads split them.
  timer.emplace(profile, layer, LayerBlock::AttnCore);
  const auto out = kernels::PagedKVLayerOut::keys_only(kv.k_layer(layer), kv.dtype(), kv.num_slots(), row);
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    kernels::write_kv_rows(s_.kv_a.data() + begin * row, nullptr, row, end - begin, attn.slot_mapping.data() + begin,
                           out);
  });

  timer.emplace(profile, layer, LayerBlock::AttnAbsorb);
  absorb_queries(w, n, pool);
  timer.emplace(profile, layer, LayerBlock::AttnCore);
  const auto layer_kv = kernels::PagedKVLayer::latent(kv.k_layer(layer), kv.dtype(), kv.num_slots(),
                                                      static_cast<int>(row), a.kv_lora_rank);
  const kernels::AttentionQueries queries{s_.q_abs.data(),         shard_.n_heads(),   batch.num_seqs(),
                                          batch.query_start.data(), batch.positions.data(), attn.block_tables.data(),
                                          attn.block_size,         a.softmax_scale};
  kernels::paged_attention(queries, layer_kv, s_.lat.data(), s_.attention, pool);
  timer.emplace(profile, layer, LayerBlock::AttnAbsorb);
  expand_values(w, n, pool);

  timer.emplace(profile, layer, LayerBlock::AttnOut);
  const float* heads = splits_heads() ? gather(s_.attn.data(), n, head_splits_, s_.attn_all) : s_.attn.data();
  kernels::matmul(w.attn_output, heads, n, s_.xn.data(), pool);
  add_rows_then_norm(s_.x.data(), s_.xn.data(), w.ffn_norm, n, config_.hidden, config_.rms_eps, pool);
}

void DeepseekDecoder::feed_forward_block(const MlaLayerWeights& w, int layer, bool moe,
                                         const std::vector<float>* next_norm, int64_t n, ThreadPool& pool,
                                         LayerProfile* profile) {
  if (moe) {
    moe_->forward(w.moe, s_.xn.data(), n, s_.xn.data(), pool, profile, layer);
    LayerTimer timer(profile, layer, LayerBlock::Router);
    if (layer < config_.n_layers) router_stats_.record(layer, moe_->tokens_per_expert());
  } else {
    LayerTimer timer(profile, layer, LayerBlock::DenseFfn);
    if (splits_heads()) {  // dense_feed_forward with the activations gathered between its two products
      kernels::matmul_swiglu(w.ffn_gate, w.ffn_up, s_.xn.data(), n, s_.gate.data(), s_.up.data(), pool);
      kernels::matmul(w.ffn_down, gather(s_.gate.data(), n, ffn_splits_, s_.ffn_all), n, s_.xn.data(), pool);
    } else {
      dense_feed_forward(w.ffn_gate, w.ffn_up, w.ffn_down, n, s_, pool);
    }
  }
  LayerTimer timer(profile, layer, moe ? LayerBlock::Shared : LayerBlock::DenseFfn);
  add_block_output(s_, next_norm, n, config_.hidden, config_.rms_eps, pool);
}

const float* DeepseekDecoder::gather(const float* part, int64_t n, const std::vector<int64_t>& splits,
                                     std::vector<float>& whole) {
  dist::all_gather_columns(*tp_, part, n, splits, whole.data(), s_.gather);
  return whole.data();
}

void DeepseekDecoder::forward(const Batch& batch, const AttentionMetadata& attn, KVStore& kv, ThreadPool& pool,
                              std::vector<float>& logits) {
  const int64_t n = check_step(batch, attn, kv, kv_cache_shape(), config_.vocab, logits);
  if (n == 0) return;
  LayerProfile* const profile = profile_.get();
  if (profile) profile->begin_step(n, batch.num_seqs());
  reserve(n, static_cast<int64_t>(batch.logits_indices.size()));
  std::optional<LayerTimer> timer(std::in_place, profile, config_.n_layers, LayerBlock::Embed);
  start_step(batch, weights_.token_embd, inv_freq_, config_.mla.qk_rope_dim / 2, rope_mscale_,
             weights_.layers.front().attn_norm, config_.hidden, config_.rms_eps, s_, pool);
  timer.reset();
  for (int layer = 0; layer < config_.n_layers; ++layer) {
    const MlaLayerWeights& w = weights_.layers[static_cast<size_t>(layer)];
    attention_block(w, layer, batch, attn, kv, pool, profile);
    const bool last = layer + 1 == config_.n_layers;
    feed_forward_block(w, layer, config_.moe.is_moe_layer(layer),
                       last ? nullptr : &weights_.layers[static_cast<size_t>(layer) + 1].attn_norm, n, pool, profile);
  }
  timer.emplace(profile, config_.n_layers, LayerBlock::Head);  // with the MTP module's final norm
  if (mtp_) {  // the MTP drafter reads every token's final hidden state
    last_hidden_.resize(static_cast<size_t>(n * config_.hidden));
    norm_rows(s_.x.data(), weights_.output_norm, n, config_.hidden, config_.rms_eps, last_hidden_.data(), pool);
  }
  project_logits(batch, weights_, config_.hidden, config_.vocab, config_.rms_eps, s_, logits, pool);
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
    DecoderScratch& s = d_.s_;
    d_.reserve(n, 0);
    grow(cat_, n * 2 * h);
    pool.parallel_for(n, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        float* row = cat_.data() + t * 2 * h;
        kernels::dequantize_row(m.embed, batch.token_ids[static_cast<size_t>(t)], row);
        kernels::rms_norm(row, m.enorm.data(), h, c.rms_eps, row);
        kernels::rms_norm(hidden_in + t * h, m.hnorm.data(), h, c.rms_eps, row + h);
      }
    });
    kernels::matmul(m.eh_proj, cat_.data(), n, s.x.data(), pool);
    rope_tables(batch, d_.inv_freq_, c.mla.qk_rope_dim / 2, d_.rope_mscale_, s, pool);
    norm_rows(s.x.data(), m.block.attn_norm, n, h, c.rms_eps, s.xn.data(), pool);
    d_.attention_block(m.block, 0, batch, attn, kv, pool, nullptr);
    d_.feed_forward_block(m.block, c.n_layers, c.moe.is_moe_layer(c.n_layers - 1), nullptr, n, pool, nullptr);
    std::memcpy(hidden_out.data(), s.x.data(), static_cast<size_t>(n * h) * sizeof(float));
  }

  void project(const float* hidden, int64_t n, ThreadPool& pool, std::vector<float>& logits) override {
    const ModelConfig& c = d_.config_;
    const MtpWeights& m = *d_.weights_.mtp;
    logits.resize(static_cast<size_t>(n * c.vocab));
    if (n == 0) return;
    grow(normed_, n * c.hidden);
    norm_rows(hidden, m.head_norm, n, c.hidden, c.rms_eps, normed_.data(), pool);
    kernels::matmul(m.head, normed_.data(), n, logits.data(), pool);
  }

 private:
  DeepseekDecoder& d_;
  std::vector<float> cat_;     // [n][2 * hidden] eh_proj's input
  std::vector<float> normed_;  // [n][hidden] the head's input
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
  mtp_ = std::make_unique<Mtp>(*this);
  return mtp_.get();
}

DeepseekDecoder::~DeepseekDecoder() {
  if (!profile_) return;
  const std::string table = profile_->table();
  if (!table.empty()) std::fputs(table.c_str(), stderr);
}

}  // namespace db

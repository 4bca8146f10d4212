#include "model/llama_weights.h"

#include <cstdint>
#include <string>

#include "model/model_source.h"
#include "model/weight_slices.h"

namespace db {

namespace {

// Loads the layer's matrices, each cut to the rank's part of `plan` (whole when the plan has one rank).
class LayerLoader {
 public:
  LayerLoader(const ModelSource& src, const ModelConfig& c, const MatrixPreparer& prepare,
              const dist::ShardPlan& plan, LlamaWeights& w)
      : src_(src), c_(c), prepare_(prepare), plan_(plan), w_(w) {}

  LlamaLayerWeights load(int layer) const {
    const std::string p = "blk." + std::to_string(layer) + ".";
    const int64_t hidden = c_.hidden, hd = c_.head_dim;
    const int64_t q_dim = int64_t{c_.n_heads} * hd, kv_dim = int64_t{c_.n_kv_heads} * hd;
    const int64_t q0 = plan_.head_begin * hd, q1 = plan_.head_end * hd;
    const int64_t kv0 = plan_.kv_head_begin * hd, kv1 = plan_.kv_head_end * hd;
    LlamaLayerWeights l;
    l.attn_norm = load_f32(src_, p + "attn_norm.weight", hidden);
    l.attn_q = rows(p + "attn_q.weight", {q_dim, hidden}, q0, q1);
    l.attn_k = rows(p + "attn_k.weight", {kv_dim, hidden}, kv0, kv1);
    l.attn_v = rows(p + "attn_v.weight", {kv_dim, hidden}, kv0, kv1);
    if (c_.qkv_bias) {
      l.q_bias = part(load_f32(src_, p + "attn_q.bias", q_dim), q0, q1);
      l.k_bias = part(load_f32(src_, p + "attn_k.bias", kv_dim), kv0, kv1);
      l.v_bias = part(load_f32(src_, p + "attn_v.bias", kv_dim), kv0, kv1);
    }
    l.attn_output = columns(p + "attn_output.weight", {hidden, q_dim}, q0, q1);
    l.ffn_norm = load_f32(src_, p + "ffn_norm.weight", hidden);
    l.ffn_gate = rows(p + "ffn_gate.weight", {c_.ffn_hidden, hidden}, plan_.ffn_begin, plan_.ffn_end);
    l.ffn_up = rows(p + "ffn_up.weight", {c_.ffn_hidden, hidden}, plan_.ffn_begin, plan_.ffn_end);
    l.ffn_down = columns(p + "ffn_down.weight", {hidden, c_.ffn_hidden}, plan_.ffn_begin, plan_.ffn_end);
    return l;
  }

 private:
  static std::vector<float> part(const std::vector<float>& v, int64_t begin, int64_t end) {
    return {v.begin() + begin, v.begin() + end};
  }

  TensorView rows(const std::string& name, const std::vector<int64_t>& shape, int64_t begin, int64_t end) const {
    const TensorView t = expect_tensor(src_, name, shape);
    if (plan_.whole()) return prepare_(t);
    return prepare_(row_slice(src_.stored_name(name), t, begin, end));
  }

  TensorView columns(const std::string& name, const std::vector<int64_t>& shape, int64_t begin, int64_t end) const {
    const TensorView t = expect_tensor(src_, name, shape);
    if (plan_.whole() || plan_.join == dist::ShardJoin::Gather) return prepare_(t);
    std::vector<uint8_t> bytes;
    const TensorView slice = column_slice(src_.stored_name(name), t, begin, end, bytes);
    prepare_.done_with(t);
    const TensorView out = prepare_.packed.prepare(slice, prepare_.pool);
    if (out.data == slice.data) w_.slices.push_back(std::move(bytes));  // read in place: keep the copy
    return out;
  }

  const ModelSource& src_;
  const ModelConfig& c_;
  const MatrixPreparer& prepare_;
  const dist::ShardPlan& plan_;
  LlamaWeights& w_;
};

dist::ShardPlan whole_model_plan(const ModelConfig& c) {
  dist::ShardPlan p;
  p.kv_head_end = c.n_kv_heads;
  p.head_end = c.n_heads;
  p.ffn_end = c.ffn_hidden;
  return p;
}

}  // namespace

dist::ShardPlan llama_shard_plan(const ModelSource& src, const ModelConfig& c, int rank, int size,
                                 dist::ShardJoin join) {
  if (size == 1) return whole_model_plan(c);
  // Gathered activations are whole rows again: ffn_down is never split, any column split will do.
  const int64_t granule =
      join == dist::ShardJoin::Gather ? 1 : block_size(src.tensor("blk.0.ffn_down.weight").dtype);
  dist::ShardPlan p = dist::make_shard_plan(c.n_heads, c.n_kv_heads, c.ffn_hidden, granule, rank, size);
  p.join = join;
  return p;
}

LlamaWeights load_llama_weights(const ModelSource& src, const ModelConfig& c, ThreadPool* pool,
                                const dist::ShardPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  const dist::ShardPlan whole = whole_model_plan(c);
  const dist::ShardPlan& p = plan.whole() ? whole : plan;
  LlamaWeights w;
  const MatrixPreparer prepare{src, w.packed, pool};
  const LayerLoader loader(src, c, prepare, p, w);
  load_token_embedding(src, c, w);
  w.layers.reserve(static_cast<size_t>(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) w.layers.push_back(loader.load(l));
  load_output_head(src, c, prepare, w);
  report_prepared_weights(src, w.packed, start);
  replicate_weights(src, w);
  return w;
}

}  // namespace db

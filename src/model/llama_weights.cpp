#include "model/llama_weights.h"

#include <cstdint>
#include <string>

#include "model/model_source.h"

namespace db {

namespace {

LlamaLayerWeights load_layer(const ModelSource& src, const ModelConfig& c, int layer, const MatrixPreparer& prepare) {
  const std::string p = "blk." + std::to_string(layer) + ".";
  const int64_t hidden = c.hidden, q_dim = int64_t{c.n_heads} * c.head_dim, kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  LlamaLayerWeights w;
  w.attn_norm = load_f32(src, p + "attn_norm.weight", hidden);
  w.attn_q = prepare(expect_tensor(src, p + "attn_q.weight", {q_dim, hidden}));
  w.attn_k = prepare(expect_tensor(src, p + "attn_k.weight", {kv_dim, hidden}));
  w.attn_v = prepare(expect_tensor(src, p + "attn_v.weight", {kv_dim, hidden}));
  if (c.qkv_bias) {
    w.q_bias = load_f32(src, p + "attn_q.bias", q_dim);
    w.k_bias = load_f32(src, p + "attn_k.bias", kv_dim);
    w.v_bias = load_f32(src, p + "attn_v.bias", kv_dim);
  }
  w.attn_output = prepare(expect_tensor(src, p + "attn_output.weight", {hidden, q_dim}));
  w.ffn_norm = load_f32(src, p + "ffn_norm.weight", hidden);
  w.ffn_gate = prepare(expect_tensor(src, p + "ffn_gate.weight", {c.ffn_hidden, hidden}));
  w.ffn_up = prepare(expect_tensor(src, p + "ffn_up.weight", {c.ffn_hidden, hidden}));
  w.ffn_down = prepare(expect_tensor(src, p + "ffn_down.weight", {hidden, c.ffn_hidden}));
  return w;
}

}  // namespace

LlamaWeights load_llama_weights(const ModelSource& src, const ModelConfig& c, ThreadPool* pool) {
  const auto start = std::chrono::steady_clock::now();
  LlamaWeights w;
  const MatrixPreparer prepare{src, w.packed, pool};
  load_token_embedding(src, c, w);
  w.layers.reserve(static_cast<size_t>(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) w.layers.push_back(load_layer(src, c, l, prepare));
  load_output_head(src, c, prepare, w);
  report_prepared_weights(src, w.packed, start);
  return w;
}

}  // namespace db

#include "model/llama_weights.h"

#include <cstdint>
#include <string>

#include "io/gguf.h"
#include "io/mapped_range.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "model/model_source.h"
#include "util/error.h"

namespace db {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  TensorView v;
  v.shape = s;
  return v.shape_str();
}

TensorView expect(const ModelSource& src, const std::string& name, const std::vector<int64_t>& shape) {
  TensorView t = src.tensor(name);
  if (t.shape != shape)
    throw Error(src.path() + ": tensor '" + src.stored_name(name) + "' has shape " + t.shape_str() + ", expected " +
                shape_str(shape));
  if (!kernels::can_dequantize(t.dtype))
    throw Error(src.path() + ": tensor '" + src.stored_name(name) + "' has dtype " + dtype_name(t.dtype) +
                ", which this build cannot compute with");
  return t;
}

std::vector<float> load_f32(const ModelSource& src, const std::string& name, int64_t n) {
  TensorView t = expect(src, name, {n});
  std::vector<float> out(static_cast<size_t>(n));
  kernels::dequantize_row(t, 0, out.data());
  return out;
}

// True if t's bytes lie inside the mapping of a GGUF source (a checkpoint's
// tensors may live in memory of their own).
bool in_file_mapping(const ModelSource& src, const TensorView& t) {
  if (src.gguf() == nullptr) return false;
  const MappedFile& m = src.gguf()->mapping();
  const auto begin = reinterpret_cast<uintptr_t>(m.data()), p = reinterpret_cast<uintptr_t>(t.data);
  return m.data() != nullptr && p >= begin && p - begin <= m.size() && t.nbytes() <= m.size() - (p - begin);
}

// Makes matrices ready for matmul: repacked into `packed` on `pool` where the ISA
// level prefers it, after which a source in the file mapping has its pages released.
struct MatrixPreparer {
  const ModelSource& src;
  kernels::PackedWeightStore& packed;
  ThreadPool* pool;

  // keep_source: the source is still read in place (the tied embedding), never released.
  TensorView operator()(const TensorView& w, bool keep_source = false) const {
    TensorView out = packed.prepare(w, pool);
    if (out.data != w.data && !keep_source && in_file_mapping(src, w)) release_mapped_range(w.data, w.nbytes());
    return out;
  }
};

LlamaLayerWeights load_layer(const ModelSource& src, const ModelConfig& c, int layer, const MatrixPreparer& prepare) {
  const std::string p = "blk." + std::to_string(layer) + ".";
  const int64_t hidden = c.hidden, q_dim = int64_t{c.n_heads} * c.head_dim, kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  LlamaLayerWeights w;
  w.attn_norm = load_f32(src, p + "attn_norm.weight", hidden);
  w.attn_q = prepare(expect(src, p + "attn_q.weight", {q_dim, hidden}));
  w.attn_k = prepare(expect(src, p + "attn_k.weight", {kv_dim, hidden}));
  w.attn_v = prepare(expect(src, p + "attn_v.weight", {kv_dim, hidden}));
  if (c.qkv_bias) {
    w.q_bias = load_f32(src, p + "attn_q.bias", q_dim);
    w.k_bias = load_f32(src, p + "attn_k.bias", kv_dim);
    w.v_bias = load_f32(src, p + "attn_v.bias", kv_dim);
  }
  w.attn_output = prepare(expect(src, p + "attn_output.weight", {hidden, q_dim}));
  w.ffn_norm = load_f32(src, p + "ffn_norm.weight", hidden);
  w.ffn_gate = prepare(expect(src, p + "ffn_gate.weight", {c.ffn_hidden, hidden}));
  w.ffn_up = prepare(expect(src, p + "ffn_up.weight", {c.ffn_hidden, hidden}));
  w.ffn_down = prepare(expect(src, p + "ffn_down.weight", {hidden, c.ffn_hidden}));
  return w;
}

}  // namespace

LlamaWeights load_llama_weights(const ModelSource& src, const ModelConfig& c, ThreadPool* pool) {
  LlamaWeights w;
  const MatrixPreparer prepare{src, w.packed, pool};
  w.token_embd = expect(src, "token_embd.weight", {c.vocab, c.hidden});
  w.layers.reserve(static_cast<size_t>(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) w.layers.push_back(load_layer(src, c, l, prepare));
  w.output_norm = load_f32(src, "output_norm.weight", c.hidden);
  // Tied: the embedding stays in the file for row lookups, the head gets its own packed copy.
  w.output = c.tied_embeddings ? prepare(w.token_embd, /*keep_source=*/true)
                               : prepare(expect(src, "output.weight", {c.vocab, c.hidden}));
  return w;
}

}  // namespace db

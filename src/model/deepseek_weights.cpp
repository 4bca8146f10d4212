#include "model/deepseek_weights.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"
#include "model/deepseek_arch.h"
#include "model/model_source.h"
#include "model/weight_slices.h"
#include "util/error.h"

namespace db {

namespace {

// Rows [r0, r0 + n) of a Rows-layout tensor of any rank, viewed as a {n, cols} matrix.
TensorView row_view(const TensorView& t, int64_t r0, int64_t n) {
  DB_CHECK(t.layout == TensorLayout::Rows, "row_view: a pre-packed tensor has no row addresses");
  TensorView v = t;
  v.shape = {n, t.cols()};
  v.data = t.row(r0);
  return v;
}

// Rows [begin, end) of the stored matrix `name` of `shape`, prepared; the whole
// matrix (prepared as is) when they are all its rows.
TensorView prepare_rows(const ModelSource& src, const MatrixPreparer& prepare, const std::string& name,
                        const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  const TensorView t = expect_tensor(src, name, shape);
  if (begin == 0 && end == t.rows()) return prepare(t);
  return prepare(row_slice(src.stored_name(name), t, begin, end));
}

void load_absorbed_kv_b(const ModelSource& src, const ModelConfig& cfg, const std::string& p, MlaLayerWeights& w,
                        DeepseekWeights& all, const MatrixPreparer& prepare, const MlaShard& shard) {
  const MlaConfig& a = cfg.mla;
  const int64_t heads = cfg.n_heads, nope = a.qk_nope_dim, c = a.kv_lora_rank, v = a.v_head_dim;
  const int64_t h0 = shard.head_begin;
  w.uk_t.resize(static_cast<size_t>(shard.n_heads()));
  w.uv.resize(static_cast<size_t>(shard.n_heads()));
  if (src.find(p + "attn_k_b.weight")) {
    // llama.cpp's split form, or a pre-packed file's (model/gguf_pack.h): per-head
    // W_UK^T and W_UV as stored, each head's matrix a slice of the stack (packed
    // ones are packed per head, so the slices are mapped in place).
    const TensorView k_b = expect_tensor(src, p + "attn_k_b.weight", {heads, c, nope});
    const TensorView v_b = expect_tensor(src, p + "attn_v_b.weight", {heads, v, c});
    for (int64_t h = h0; h < shard.head_end; ++h) {
      w.uk_t[static_cast<size_t>(h - h0)] = prepare(expert_slice(k_b, h));
      w.uv[static_cast<size_t>(h - h0)] = prepare(expert_slice(v_b, h));
    }
    return;
  }
  const TensorView kv_b = expect_tensor(src, p + "attn_kv_b.weight", {heads * (nope + v), c});
  const DType uk_type = built_uk_type(kv_b.dtype, nope);
  // Built before prepare() may release kv_b's pages.
  all.built.push_back(transpose_uk(kv_b, a, shard.n_heads(), uk_type, shard.head_begin));
  const uint8_t* uk = all.built.back().get();
  for (int64_t h = h0; h < shard.head_end; ++h) {
    TensorView t;
    t.dtype = uk_type;
    t.shape = {c, nope};
    t.data = uk + static_cast<size_t>((h - h0) * c) * row_bytes(uk_type, nope);
    w.uk_t[static_cast<size_t>(h - h0)] = prepare(t);
    w.uv[static_cast<size_t>(h - h0)] = prepare(kv_b_uv_head(kv_b, a, h));
  }
  all.built_matrices += shard.n_heads();
  src.note_done_with(kv_b);  // its W_UK rows live on in `built`
}

void load_attention(const ModelSource& src, const ModelConfig& c, const std::string& p, MlaLayerWeights& w,
                    DeepseekWeights& all, const MatrixPreparer& prepare, const MlaShard& shard) {
  const MlaConfig& a = c.mla;
  const int64_t hidden = c.hidden, q_dim = int64_t{c.n_heads} * a.qk_head_dim();
  const int64_t q0 = shard.head_begin * a.qk_head_dim(), q1 = shard.head_end * a.qk_head_dim();
  w.attn_norm = load_f32(src, p + "attn_norm.weight", hidden);
  if (a.q_lora_rank > 0) {
    w.attn_q_a = prepare(expect_tensor(src, p + "attn_q_a.weight", {a.q_lora_rank, hidden}));
    w.q_a_norm = load_f32(src, p + "attn_q_a_norm.weight", a.q_lora_rank);
    w.attn_q_b = prepare_rows(src, prepare, p + "attn_q_b.weight", {q_dim, a.q_lora_rank}, q0, q1);
  } else {
    w.attn_q = prepare_rows(src, prepare, p + "attn_q.weight", {q_dim, hidden}, q0, q1);
  }
  w.attn_kv_a = prepare(expect_tensor(src, p + "attn_kv_a_mqa.weight", {a.kv_lora_rank + a.qk_rope_dim, hidden}));
  w.kv_a_norm = load_f32(src, p + "attn_kv_a_norm.weight", a.kv_lora_rank);
  load_absorbed_kv_b(src, c, p, w, all, prepare, shard);
  w.attn_output = prepare(expect_tensor(src, p + "attn_output.weight", {hidden, int64_t{c.n_heads} * a.v_head_dim}));
  w.ffn_norm = load_f32(src, p + "ffn_norm.weight", hidden);
}

// gate / up hold the columns [begin, end) of the FFN's `ffn`; down is whole.
ExpertWeights load_ffn(const ModelSource& src, const std::string& p, const std::string& suffix, int64_t ffn,
                       int64_t hidden, const MatrixPreparer& prepare, int64_t begin, int64_t end) {
  ExpertWeights e;
  e.gate = prepare_rows(src, prepare, p + "ffn_gate" + suffix + ".weight", {ffn, hidden}, begin, end);
  e.up = prepare_rows(src, prepare, p + "ffn_up" + suffix + ".weight", {ffn, hidden}, begin, end);
  e.down = prepare(expect_tensor(src, p + "ffn_down" + suffix + ".weight", {hidden, ffn}));
  return e;
}

const char* gguf_expert_name(ExpertProj proj) {
  return proj == ExpertProj::Gate ? "ffn_gate_exps" : proj == ExpertProj::Up ? "ffn_up_exps" : "ffn_down_exps";
}

const char* hf_expert_proj(ExpertProj proj) {
  return proj == ExpertProj::Gate ? "gate_proj" : proj == ExpertProj::Up ? "up_proj" : "down_proj";
}

// Experts outside `experts` get shape-only views (null data): never read from the file.
MoeLayerWeights load_moe(const ModelSource& src, const ModelConfig& c, int layer, const MatrixPreparer& prepare,
                         const ExpertShard& experts, const MlaShard& shard) {
  const MoeConfig& m = c.moe;
  const std::string p = "blk." + std::to_string(layer) + ".";
  const int64_t hidden = c.hidden, ffn = m.expert_ffn;
  MoeLayerWeights w;
  w.router = load_f32(src, p + "ffn_gate_inp.weight", m.n_experts, hidden);
  if (src.find(p + "exp_probs_b.bias")) w.score_bias = load_f32(src, p + "exp_probs_b.bias", m.n_experts);
  if (src.gguf()) {  // check the stacked tensors once, naming them
    expect_tensor(src, p + "ffn_gate_exps.weight", {m.n_experts, ffn, hidden});
    expect_tensor(src, p + "ffn_up_exps.weight", {m.n_experts, ffn, hidden});
    expect_tensor(src, p + "ffn_down_exps.weight", {m.n_experts, hidden, ffn});
  }
  auto expert = [&](ExpertProj proj, int e, std::vector<int64_t> shape) {
    TensorView t = expert_matrix(src, layer, proj, e);
    check_tensor(
        src,
        src.gguf() ? p + gguf_expert_name(proj) + ".weight" : deepseek_hf_expert_name(layer, e, hf_expert_proj(proj)),
        t, shape);
    return prepare(t);
  };
  auto absent = [](std::vector<int64_t> shape) {
    TensorView t;
    t.shape = std::move(shape);
    return t;
  };
  w.experts.resize(static_cast<size_t>(m.n_experts));
  for (int e = 0; e < m.n_experts; ++e) {
    ExpertWeights& x = w.experts[static_cast<size_t>(e)];
    if (!experts.holds(e)) {
      x = ExpertWeights{absent({ffn, hidden}), absent({ffn, hidden}), absent({hidden, ffn})};
      continue;
    }
    x.gate = expert(ExpertProj::Gate, e, {ffn, hidden});
    x.up = expert(ExpertProj::Up, e, {ffn, hidden});
    x.down = expert(ExpertProj::Down, e, {hidden, ffn});
  }
  if (m.n_shared_experts > 0)
    w.shared = load_ffn(src, p, "_shexp", ffn * m.n_shared_experts, hidden, prepare, shard.shared_begin,
                        shard.shared_end);
  check_moe_layer_weights(m, hidden, w, shard.shared_end - shard.shared_begin);
  return w;
}

// `moe`: the block's feed-forward is DeepSeekMoE, else dense.
MlaLayerWeights load_layer(const ModelSource& src, const ModelConfig& c, int layer, bool moe, DeepseekWeights& all,
                           const MatrixPreparer& prepare, const MlaShard& shard, const ExpertShard& experts = {}) {
  const std::string p = "blk." + std::to_string(layer) + ".";
  MlaLayerWeights w;
  load_attention(src, c, p, w, all, prepare, shard);
  if (moe) {
    w.moe = load_moe(src, c, layer, prepare, experts, shard);
  } else {
    const ExpertWeights d = load_ffn(src, p, "", c.ffn_hidden, c.hidden, prepare, shard.ffn_begin, shard.ffn_end);
    w.ffn_gate = d.gate;
    w.ffn_up = d.up;
    w.ffn_down = d.down;
  }
  return w;
}

// The layer number of a tensor named "<prefix><N>.<rest>"; nullopt for other names.
std::optional<int64_t> layer_of(const std::string& name, const std::string& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos || dot == prefix.size()) return std::nullopt;
  const std::string n = name.substr(prefix.size(), dot - prefix.size());
  if (n.find_first_not_of("0123456789") != std::string::npos || n.size() > 9) return std::nullopt;
  return std::stoll(n);
}

// One stderr line about the tensors of layers this model does not run: DeepSeek-V3's
// multi-token-prediction ("nextn") layers, stored past block_count / num_hidden_layers.
void note_unused_layers(const ModelSource& src, const ModelConfig& c) {
  std::vector<std::string> names;
  std::string prefix;
  if (src.gguf()) {
    for (const GGUFTensorInfo& t : src.gguf()->tensor_infos()) names.push_back(t.name);
    prefix = "blk.";
  } else {
    names = src.hf()->tensor_names();
    prefix = "model.layers.";
  }
  int64_t skipped = 0, first = -1;
  for (const std::string& n : names) {
    const auto layer = layer_of(n, prefix);
    const bool nextn = n.find(".nextn.") != std::string::npos;
    if (!nextn && (!layer || *layer < c.n_layers)) continue;
    ++skipped;
    if (layer && (first < 0 || *layer < first)) first = *layer;
  }
  if (skipped == 0) return;
  std::fprintf(stderr, "note: %s: skipping %lld tensors of unused layers (from %s%lld; multi-token prediction)\n",
               src.path().c_str(), static_cast<long long>(skipped), prefix.c_str(), static_cast<long long>(first));
}

}  // namespace

DType built_uk_type(DType kv_b_type, int64_t nope) {
  if (kv_b_type == DType::F32 || kv_b_type == DType::F16 || kv_b_type == DType::BF16) return kv_b_type;
  return nope % block_size(DType::Q8_0) == 0 ? DType::Q8_0 : DType::F32;
}

std::unique_ptr<uint8_t[]> transpose_uk(const TensorView& kv_b, const MlaConfig& a, int n_heads, DType t,
                                        int head_begin) {
  DB_CHECK(kv_b.layout == TensorLayout::Rows, "transpose_uk: attn_kv_b must be in Rows layout");
  const int64_t nope = a.qk_nope_dim, c = a.kv_lora_rank, per_head = nope + a.v_head_dim;
  const size_t out_row = row_bytes(t, nope);
  auto out = std::make_unique<uint8_t[]>(static_cast<size_t>(n_heads * c) * out_row);
  std::vector<float> head(static_cast<size_t>(nope * c)), row(static_cast<size_t>(c));
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < nope; ++i) {
      kernels::dequantize_row(kv_b, (head_begin + h) * per_head + i, row.data());
      for (int64_t j = 0; j < c; ++j) head[static_cast<size_t>(j * nope + i)] = row[static_cast<size_t>(j)];
    }
    for (int64_t j = 0; j < c; ++j)
      kernels::quantize_row(t, head.data() + j * nope, out.get() + static_cast<size_t>(h * c + j) * out_row, nope);
  }
  return out;
}

TensorView kv_b_uv_head(const TensorView& kv_b, const MlaConfig& a, int64_t h) {
  const int64_t per_head = a.qk_nope_dim + a.v_head_dim;
  return row_view(kv_b, h * per_head + a.qk_nope_dim, a.v_head_dim);
}

TensorView expert_matrix(const ModelSource& src, int layer, ExpertProj proj, int e) {
  if (src.gguf())
    return expert_slice(src.tensor("blk." + std::to_string(layer) + "." + gguf_expert_name(proj) + ".weight"), e);
  const HFCheckpoint& hf = *src.hf();
  const std::string name = deepseek_hf_expert_name(layer, e, hf_expert_proj(proj));
  if (auto t = src.find_stored(name)) return *t;  // converted when the checkpoint is quantized
  // transformers >= 5 saves the experts fused: gate_up_proj {E, 2 * ffn, hidden}, down_proj {E, hidden, ffn}.
  const std::string fused = "model.layers." + std::to_string(layer) + ".mlp.experts." +
                            (proj == ExpertProj::Down ? "down_proj" : "gate_up_proj");
  auto t = hf.find(fused);
  if (!t) throw Error(src.path() + ": missing tensor '" + name + "'");
  TensorView x = expert_slice(*t, e);
  if (proj == ExpertProj::Down) return x;
  const int64_t ffn = x.shape[0] / 2;
  return row_view(x, proj == ExpertProj::Gate ? 0 : ffn, ffn);
}

MlaShard whole_mla_shard(const ModelConfig& c) {
  MlaShard s;
  s.head_end = c.n_heads;
  s.ffn_end = c.ffn_hidden;
  s.shared_end = c.moe.enabled() ? int64_t{c.moe.n_shared_experts} * c.moe.expert_ffn : 0;
  return s;
}

DeepseekWeights load_deepseek_weights(const ModelSource& src, const ModelConfig& c, ThreadPool* pool,
                                      const ExpertShard& experts, const MlaShard& heads_and_columns) {
  const auto start = std::chrono::steady_clock::now();
  const MlaShard whole = whole_mla_shard(c);
  const MlaShard& shard = heads_and_columns.whole() ? whole : heads_and_columns;
  note_unused_layers(src, c);
  DeepseekWeights w;
  const MatrixPreparer prepare{src, w.packed, pool};
  load_token_embedding(src, c, w);
  w.layers.reserve(static_cast<size_t>(c.n_layers));
  for (int l = 0; l < c.n_layers; ++l) w.layers.push_back(load_layer(src, c, l, c.moe.is_moe_layer(l), w, prepare, shard, experts));
  load_output_head(src, c, prepare, w);
  report_prepared_weights(src, w.packed, start, w.built_matrices);
  replicate_weights(src, w);
  return w;
}

namespace {

std::string mtp_prefix(const ModelConfig& c) { return "blk." + std::to_string(c.n_layers) + ".nextn."; }

}  // namespace

bool has_mtp_layer(const ModelSource& src, const ModelConfig& c) {
  return src.contains(mtp_prefix(c) + "eh_proj.weight");
}

void load_mtp_weights(const ModelSource& src, const ModelConfig& c, DeepseekWeights& w, ThreadPool* pool) {
  if (!has_mtp_layer(src, c))
    throw Error(src.path() + ": no multi-token-prediction layer (tensor '" + mtp_prefix(c) + "eh_proj.weight')");
  const MatrixPreparer prepare{src, w.packed, pool};
  const std::string p = mtp_prefix(c);
  const int64_t hidden = c.hidden;
  MtpWeights m;
  m.block = load_layer(src, c, c.n_layers, c.moe.is_moe_layer(c.n_layers - 1), w, prepare, whole_mla_shard(c));
  m.enorm = load_f32(src, p + "enorm.weight", hidden);
  m.hnorm = load_f32(src, p + "hnorm.weight", hidden);
  m.eh_proj = prepare(expect_tensor(src, p + "eh_proj.weight", {hidden, 2 * hidden}));
  m.embed = src.find(p + "embed_tokens.weight") ? expect_tensor(src, p + "embed_tokens.weight", {c.vocab, hidden})
                                                 : w.token_embd;
  m.head_norm = load_f32(src, p + "shared_head_norm.weight", hidden);
  m.head = src.find(p + "shared_head_head.weight")
               ? prepare(expect_tensor(src, p + "shared_head_head.weight", {c.vocab, hidden}))
               : w.output;
  w.mtp = std::move(m);
}

}  // namespace db

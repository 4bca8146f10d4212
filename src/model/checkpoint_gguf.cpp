#include "model/checkpoint_gguf.h"

#include <cstring>
#include <filesystem>
#include <set>
#include <vector>

#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "io/mapped_range.h"
#include "model/checkpoint_converter.h"
#include "model/config.h"
#include "model/config_gguf_writer.h"
#include "model/deepseek_arch.h"
#include "model/deepseek_weights.h"
#include "model/gguf_model_writer.h"
#include "model/model_source.h"
#include "model/registry.h"
#include "tokenizer/tokenizer_gguf_keys.h"
#include "util/error.h"

namespace db {

namespace fs = std::filesystem;

namespace {

// One tensor of the output file and where its bytes come from.
struct Planned {
  // UkT, Uv: MLA's absorbed matrices, split from attn_kv_b (as pack_gguf does).
  enum class Kind { Stored, Experts, TiedHead, UkT, Uv };
  Kind kind = Kind::Stored;
  std::string name;    // GGUF name
  std::string stored;  // checkpoint name (Stored, UkT, Uv: that of attn_kv_b)
  std::string source;  // UkT, Uv: the GGUF name of the attn_kv_b they come from
  size_t rank = 2;
  int layer = 0;                      // Experts
  ExpertProj proj = ExpertProj::Gate;  // Experts
  int paired_heads = 0;               // > 0: rows reordered for interleaved RoPE over this many heads
};

// The layer numbers N of the checkpoint's "model.layers.N." tensors, ascending.
std::set<int> checkpoint_layers(const HFCheckpoint& hf) {
  const std::string prefix = "model.layers.";
  std::set<int> layers;
  for (const std::string& n : hf.tensor_names()) {
    if (n.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t dot = n.find('.', prefix.size());
    const std::string num = n.substr(prefix.size(), dot == std::string::npos ? 0 : dot - prefix.size());
    if (!num.empty() && num.size() < 9 && num.find_first_not_of("0123456789") == std::string::npos)
      layers.insert(std::stoi(num));
  }
  return layers;
}

const char* expert_proj_name(ExpertProj p) {
  return p == ExpertProj::Gate ? "gate_proj" : p == ExpertProj::Up ? "up_proj" : "down_proj";
}

const char* gguf_experts_name(ExpertProj p) {
  return p == ExpertProj::Gate ? "ffn_gate_exps.weight" : p == ExpertProj::Up ? "ffn_up_exps.weight"
                                                                              : "ffn_down_exps.weight";
}

// True if layer `layer` stores routed experts, per expert or fused (deepseek_weights.h's expert_matrix).
bool has_routed_experts(const ModelSource& src, int layer) {
  const std::string e0 = deepseek_hf_expert_name(layer, 0, "gate_proj");
  const std::string fused = "model.layers." + std::to_string(layer) + ".mlp.experts.gate_up_proj";
  return src.hf()->find(e0) || (src.converter() && src.converter()->converts(e0)) || src.hf()->find(fused);
}

// The tensors of the output file, in the order the loaders read them.
std::vector<Planned> plan_tensors(const ModelSource& src, const ModelConfig& c) {
  const Architecture& arch = src.arch();
  const CheckpointConverter* conv = src.converter();
  auto rank_of = [&](const std::string& stored) -> size_t {
    if (conv && conv->converts(stored)) return 2;
    return src.hf()->tensor(stored).shape.size();
  };
  auto stored = [&](const std::string& name) {
    Planned p;
    p.name = name;
    p.stored = src.stored_name(name);
    p.rank = rank_of(p.stored);
    return p;
  };
  std::vector<Planned> plan;
  for (const char* g : {"token_embd.weight", "output_norm.weight", "output.weight"}) {
    if (std::string(g) == "output.weight" && c.tied_embeddings) continue;  // absent: the GGUF reader ties it
    if (src.contains(g)) plan.push_back(stored(g));
  }
  for (int layer : checkpoint_layers(*src.hf())) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    for (const auto& [suffix, unused] : arch.hf_names.layer_suffixes) {
      if (!src.contains(p + suffix)) continue;
      const bool qkv_bias = suffix == "attn_q.bias" || suffix == "attn_k.bias" || suffix == "attn_v.bias";
      if (qkv_bias && !c.qkv_bias) continue;  // the directory's config ignores them; a GGUF file would not
      Planned t = stored(p + suffix);
      if (arch.gguf_pairs_qk_rows && (suffix.rfind("attn_q.", 0) == 0 || suffix.rfind("attn_k.", 0) == 0)) {
        if (c.rope_dims != c.head_dim)
          throw Error(src.path() + ": " + std::to_string(c.rope_dims) + " of " + std::to_string(c.head_dim) +
                      " head dimensions rotated: a " + c.arch + " GGUF file cannot hold partial RoPE");
        t.paired_heads = suffix.rfind("attn_q.", 0) == 0 ? c.n_heads : c.n_kv_heads;
      }
      plan.push_back(t);
    }
    // DeepSeekMoE (the one architecture with routed experts): a checkpoint
    // stores them per expert, a GGUF file stacked per projection.
    if (!c.moe.enabled() || layer < c.moe.leading_dense_layers) continue;
    if (!has_routed_experts(src, layer)) {
      if (layer < c.n_layers)
        throw Error(src.path() + ": missing tensor '" + deepseek_hf_expert_name(layer, 0, "gate_proj") + "'");
      continue;
    }
    for (ExpertProj proj : {ExpertProj::Gate, ExpertProj::Up, ExpertProj::Down}) {
      Planned e;
      e.kind = Planned::Kind::Experts;
      e.name = p + gguf_experts_name(proj);
      e.rank = 3;
      e.layer = layer;
      e.proj = proj;
      plan.push_back(e);
    }
  }
  return plan;
}

// `plan` with each layer's MLA attn_kv_b replaced by the split attn_k_b
// {heads, kv_lora, nope} (W_UK_h^T) and attn_v_b {heads, v, kv_lora} (W_UV_h),
// the form a pre-packed file holds so that a load builds nothing
// (model/gguf_pack.h).
std::vector<Planned> split_mla_kv_b(const std::vector<Planned>& plan) {
  constexpr std::string_view kKvB = "attn_kv_b.weight";
  std::vector<Planned> out;
  for (const Planned& p : plan) {
    const bool kv_b = p.kind == Planned::Kind::Stored && p.name.size() > kKvB.size() &&
                      p.name.compare(p.name.size() - kKvB.size(), kKvB.size(), kKvB) == 0;
    if (!kv_b) {
      out.push_back(p);
      continue;
    }
    const std::string layer = p.name.substr(0, p.name.size() - kKvB.size());
    for (Planned::Kind k : {Planned::Kind::UkT, Planned::Kind::Uv}) {
      Planned m = p;
      m.kind = k;
      m.name = layer + (k == Planned::Kind::UkT ? "attn_k_b.weight" : "attn_v_b.weight");
      m.source = p.name;
      m.rank = 3;
      out.push_back(m);
    }
  }
  return out;
}

// t's rows (a matrix's, or a vector's elements) reordered as llama.cpp's
// converter does: in each of `heads` heads, row 2j + i is row i * d / 2 + j.
std::vector<uint8_t> paired_rope_rows(const TensorView& t, int heads, const std::string& where) {
  const int64_t n = t.shape[0];
  const size_t row = t.shape.size() == 1 ? row_bytes(t.dtype, 1) : t.row_nbytes();
  if (heads <= 0 || n % (2 * heads) != 0 || (t.shape.size() == 1 && block_size(t.dtype) != 1))
    throw Error(where + ": " + t.shape_str() + " " + dtype_name(t.dtype) + " does not split into " +
                std::to_string(heads) + " heads of rotated pairs");
  const int64_t d = n / heads, half = d / 2;
  std::vector<uint8_t> out(static_cast<size_t>(n) * row);
  const auto* in = static_cast<const uint8_t*>(t.data);
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t j = 0; j < half; ++j)
      for (int64_t i = 0; i < 2; ++i)
        std::memcpy(out.data() + static_cast<size_t>(h * d + 2 * j + i) * row,
                    in + static_cast<size_t>(h * d + i * half + j) * row, row);
  return out;
}

// The directory's name, for general.name.
std::string checkpoint_model_name(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

// Reopens the written file and compares what a load would read with `c`,
// `tokenizer` and `chat_template`; the first difference, or empty.
std::string loads_differently(const std::string& path, const ModelConfig& c, bool rows_paired,
                              const Tokenizer& tokenizer, const std::optional<std::string>& chat_template) {
  const auto back = ModelSource::open(path);
  std::string diff = config_difference(c, read_model_config(*back), rows_paired);
  if (!diff.empty()) return "configuration: " + diff;
  diff = tokenizer_difference(tokenizer, *Tokenizer::from_gguf(*back->gguf()));
  if (!diff.empty()) return "tokenizer: " + diff;
  if (back->gguf()->opt_string("tokenizer.chat_template") != chat_template) return "chat template";
  return "";
}

}  // namespace

CheckpointGgufReport convert_checkpoint_to_gguf(const std::string& dir, const std::string& out_path,
                                                const LoadOptions& options, std::optional<IsaLevel> pack_level,
                                                ThreadPool* pool) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": expected a checkpoint directory, got none at that path");
  LoadOptions load;
  load.quantize = options.quantize;
  const auto src = ModelSource::open(dir, load);
  const ModelConfig c = read_model_config(*src);
  TokenizerParts parts = Tokenizer::hf_dir_parts(dir);
  const std::optional<std::string> chat_template = hf_chat_template(dir);
  CheckpointConverter* conv = src->converter();
  if (conv) conv->set_pool(pool);

  std::vector<Planned> plan = plan_tensors(*src, c);
  if (pack_level) plan = split_mla_kv_b(plan);
  GgufModelWriter out(out_path, pack_level, pool);
  add_config_gguf_keys(c, src->arch(), out.metadata());
  out.metadata().add_string("general.name", checkpoint_model_name(dir));
  add_tokenizer_gguf_keys(parts, out.metadata());
  if (chat_template) out.metadata().add_string("tokenizer.chat_template", *chat_template);

  const std::vector<float> freq_factors = rope_freq_factors(c);
  const std::optional<TensorView> embd = src->find("token_embd.weight");
  if (c.tied_embeddings && embd && out.would_pack("output.weight", embd->dtype, embd->shape.size())) {
    Planned head;  // packed once here rather than at every load
    head.kind = Planned::Kind::TiedHead;
    head.name = "output.weight";
    plan.push_back(head);
  }
  for (const Planned& p : plan)
    out.declare(p.name, p.rank,
                p.kind == Planned::Kind::Experts ? c.moe.n_experts : p.kind == Planned::Kind::Uv ? c.n_heads : 1);
  if (!freq_factors.empty()) out.declare("rope_freqs.weight", 1);

  // A converted matrix is freed once written; a stored tensor's mapped pages
  // are handed back as they are written (the embedding's, when the tied head
  // reads it again, with the head).
  const bool tied_head = !plan.empty() && plan.back().kind == Planned::Kind::TiedHead;
  auto converted = [&](const std::string& stored) { return conv && conv->converts(stored); };
  for (size_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    if (p.kind == Planned::Kind::TiedHead) {
      out.write(i, *embd, 0, /*release_mapped=*/!converted(src->stored_name("token_embd.weight")));
    } else if (p.kind == Planned::Kind::UkT || p.kind == Planned::Kind::Uv) {
      const MlaConfig& a = c.mla;
      const int64_t heads = c.n_heads, nope = a.qk_nope_dim;
      const TensorView kv_b = src->tensor(p.source);
      if (p.kind == Planned::Kind::UkT) {
        const DType t = built_uk_type(kv_b.dtype, nope);
        const std::unique_ptr<uint8_t[]> uk_t = transpose_uk(kv_b, a, static_cast<int>(heads), t);
        out.write(i, TensorView{t, {heads, a.kv_lora_rank, nope}, uk_t.get()});
      } else {  // after its UkT: kv_b is done with
        for (int64_t h = 0; h < heads; ++h) out.write(i, kv_b_uv_head(kv_b, a, h), h);
        if (converted(p.stored)) {
          src->note_done_with(kv_b);
        } else {
          release_mapped_range(kv_b.data, kv_b.nbytes());
        }
      }
    } else if (p.kind == Planned::Kind::Experts) {
      for (int e = 0; e < c.moe.n_experts; ++e) {
        const std::string name = deepseek_hf_expert_name(p.layer, e, expert_proj_name(p.proj));
        const TensorView m = expert_matrix(*src, p.layer, p.proj, e);
        out.write(i, m, e, /*release_mapped=*/!converted(name));
        if (converted(name)) src->note_done_with(m);
      }
    } else {
      const TensorView t = src->tensor(p.name);
      if (p.paired_heads > 0) {
        const std::vector<uint8_t> rows = paired_rope_rows(t, p.paired_heads, dir + ": tensor '" + p.stored + "'");
        out.write(i, TensorView{t.dtype, t.shape, rows.data()});
        if (!converted(p.stored)) release_mapped_range(t.data, t.nbytes());
      } else {
        const bool keep = tied_head && p.name == "token_embd.weight";
        out.write(i, t, 0, /*release_mapped=*/!converted(p.stored) && !keep);
      }
      if (converted(p.stored)) src->note_done_with(t);
    }
  }
  if (!freq_factors.empty())
    out.write(plan.size(), TensorView{DType::F32, {static_cast<int64_t>(freq_factors.size())}, freq_factors.data()});
  const GgufModelWriter::Report r = out.finish();

  const std::unique_ptr<Tokenizer> tokenizer = Tokenizer::from_parts(std::move(parts));
  ModelConfig expect = c;  // a tied head written packed loads as an untied one holding the same bytes
  if (tied_head) expect.tied_embeddings = false;
  const std::string diff =
      loads_differently(out_path, expect, src->arch().gguf_pairs_qk_rows, *tokenizer, chat_template);
  if (!diff.empty()) {
    fs::remove(out_path, ec);
    throw Error(dir + ": the GGUF file would not load as the directory does (" + diff +
                " differs: GGUF keys cannot say it); nothing was written to " + out_path);
  }
  CheckpointGgufReport report;
  report.tensors = r.packed + r.rows;
  report.packed = r.packed;
  report.bytes = r.bytes;
  if (conv) {
    report.conversion = conv->summary();
    report.peak_converted_bytes = conv->peak_bytes_held();
    conv->set_pool(nullptr);
  }
  return report;
}

}  // namespace db

#include "model/gguf_pack.h"

#include <array>
#include <string_view>
#include <vector>

#include "io/gguf.h"
#include "io/mapped_range.h"
#include "model/config.h"
#include "model/deepseek_weights.h"
#include "model/gguf_model_writer.h"
#include "model/model_source.h"
#include "model/weight_loading.h"
#include "util/error.h"

namespace db {

namespace {

// The layer tensors (after "blk.N.") the loaders pass whole to MatrixPreparer:
// model/llama_weights.cpp, model/deepseek_weights.cpp; stacks (the experts,
// MLA's per-head attn_k_b and attn_v_b) matrix by matrix. MLA's combined
// attn_kv_b is read by rows to build the absorbed matrices, the router
// ffn_gate_inp as floats: neither is listed.
constexpr std::array<std::string_view, 19> kWholeLayerMatrices = {
    "attn_q.weight",         "attn_k.weight",         "attn_v.weight",         "attn_output.weight",
    "attn_q_a.weight",       "attn_q_b.weight",       "attn_kv_a_mqa.weight",  "attn_k_b.weight",
    "attn_v_b.weight",       "ffn_gate.weight",       "ffn_up.weight",         "ffn_down.weight",
    "ffn_gate_shexp.weight", "ffn_up_shexp.weight",   "ffn_down_shexp.weight", "ffn_gate_exps.weight",
    "ffn_up_exps.weight",    "ffn_down_exps.weight",  "nextn.eh_proj.weight"};

constexpr std::string_view kKvB = "attn_kv_b.weight";

// "blk.N." for a tensor named "blk.N.attn_kv_b.weight", else empty.
std::string kv_b_layer_prefix(const std::string& name) {
  if (name.rfind("blk.", 0) != 0 || name.size() <= kKvB.size() ||
      name.compare(name.size() - kKvB.size(), kKvB.size(), kKvB) != 0)
    return "";
  const std::string p = name.substr(0, name.size() - kKvB.size());
  return p.find('.', 4) == p.size() - 1 ? p : "";
}

// What an output tensor is made of: an input tensor as it is, or one of MLA's
// absorbed matrices built from the input's attn_kv_b.
enum class Made { Copy, UkT, Uv };

}  // namespace

bool loader_multiplies_whole(const std::string& gguf_name) {
  if (gguf_name == "output.weight") return true;
  if (gguf_name.rfind("blk.", 0) != 0) return false;
  const size_t dot = gguf_name.find('.', 4);
  if (dot == std::string::npos) return false;
  const std::string_view rest = std::string_view(gguf_name).substr(dot + 1);
  for (std::string_view m : kWholeLayerMatrices)
    if (rest == m) return true;
  return rest == "nextn.shared_head_head.weight";
}

GgufPackReport pack_gguf(const std::string& in_path, const std::string& out_path, IsaLevel level, ThreadPool* pool) {
  const auto in = GGUFFile::open(in_path);
  GgufModelWriter out(out_path, level, pool);
  for (const auto& [key, value] : in->metadata()) {
    if (key == "general.alignment" || key == kGGUFPanelVersionKey || key == kGGUFPanelLevelKey) continue;
    out.metadata().add_value(key, value);
  }
  // MLA's combined attn_kv_b becomes the split attn_k_b {heads, kv_lora, nope}
  // (W_UK_h^T, built by the loader's own transpose_uk) and attn_v_b {heads, v,
  // kv_lora} (W_UV_h, kv_b's rows), each head's matrix packed on its own like
  // an expert of a stack: the loader then takes per-head slices where they lie
  // and builds nothing. The metadata stays as it is (the loader tells the forms
  // apart by the tensors). The model's source (its configuration, and the
  // tensors checked by the loader's expect_tensor) is opened only for these.
  std::unique_ptr<ModelSource> src;
  ModelConfig cfg;
  std::vector<const GGUFTensorInfo*> sources;
  std::vector<Made> made;
  auto add = [&](const std::string& name, size_t rank, int64_t parts, const GGUFTensorInfo* from, Made how) {
    out.declare(name, rank, parts);
    sources.push_back(from);
    made.push_back(how);
  };
  for (const GGUFTensorInfo& t : in->tensor_infos()) {
    if (t.layout != TensorLayout::Rows)
      throw Error(in_path + ": tensor '" + t.name + "' is already pre-packed: pack the original model file");
    const std::string layer = kv_b_layer_prefix(t.name);
    if (layer.empty() || in->find_tensor(layer + "attn_k_b.weight") != nullptr) {  // split already: kv_b unused
      add(t.name, t.shape.size(), 1, &t, Made::Copy);
      continue;
    }
    if (!src) {
      src = ModelSource::open(in_path);
      cfg = read_model_config(*src);
    }
    add(layer + "attn_k_b.weight", 3, 1, &t, Made::UkT);
    add(layer + "attn_v_b.weight", 3, cfg.n_heads, &t, Made::Uv);
  }
  const GGUFTensorInfo* embd = in->find_tensor("token_embd.weight");
  if (in->find_tensor("output.weight") == nullptr && embd != nullptr &&
      out.would_pack("output.weight", embd->dtype, embd->shape.size())) {
    // the tied head, packed once here rather than at every load
    add("output.weight", embd->shape.size(), 1, embd, Made::Copy);
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    if (made[i] == Made::Copy) {  // the embedding is read again for the tied head: kept
      out.write(i, in->tensor(sources[i]->name), 0, /*release_mapped=*/sources[i] != embd);
      continue;
    }
    const MlaConfig& a = cfg.mla;
    const int64_t heads = cfg.n_heads, nope = a.qk_nope_dim, c = a.kv_lora_rank;
    const TensorView kv_b = expect_tensor(*src, sources[i]->name, {heads * (nope + a.v_head_dim), c});
    if (made[i] == Made::UkT) {
      const DType t = built_uk_type(kv_b.dtype, nope);
      const std::unique_ptr<uint8_t[]> uk_t = transpose_uk(kv_b, a, static_cast<int>(heads), t);
      out.write(i, TensorView{t, {heads, c, nope}, uk_t.get()});
    } else {
      for (int64_t h = 0; h < heads; ++h) out.write(i, kv_b_uv_head(kv_b, a, h), h);
      release_mapped_range(kv_b.data, kv_b.nbytes());
    }
  }
  const GgufModelWriter::Report r = out.finish();
  return GgufPackReport{r.packed, r.rows, r.bytes};
}

}  // namespace db

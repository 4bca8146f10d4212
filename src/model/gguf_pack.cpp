#include "model/gguf_pack.h"

#include <array>
#include <string_view>
#include <vector>

#include "io/gguf.h"
#include "model/gguf_model_writer.h"
#include "util/error.h"

namespace db {

namespace {

// The layer tensors (after "blk.N.") the loaders pass whole to MatrixPreparer:
// model/llama_weights.cpp, model/deepseek_weights.cpp (MLA's attn_kv_b,
// attn_k_b and attn_v_b are read by rows to build the absorbed matrices, the
// router ffn_gate_inp as floats; neither is listed).
constexpr std::array<std::string_view, 17> kWholeLayerMatrices = {
    "attn_q.weight",         "attn_k.weight",        "attn_v.weight",         "attn_output.weight",
    "attn_q_a.weight",       "attn_q_b.weight",      "attn_kv_a_mqa.weight",  "ffn_gate.weight",
    "ffn_up.weight",         "ffn_down.weight",      "ffn_gate_shexp.weight", "ffn_up_shexp.weight",
    "ffn_down_shexp.weight", "ffn_gate_exps.weight", "ffn_up_exps.weight",    "ffn_down_exps.weight",
    "nextn.eh_proj.weight"};

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
  std::vector<const GGUFTensorInfo*> sources;
  for (const GGUFTensorInfo& t : in->tensor_infos()) {
    if (t.layout != TensorLayout::Rows)
      throw Error(in_path + ": tensor '" + t.name + "' is already pre-packed: pack the original model file");
    out.declare(t.name, t.shape.size());
    sources.push_back(&t);
  }
  const GGUFTensorInfo* embd = in->find_tensor("token_embd.weight");
  if (in->find_tensor("output.weight") == nullptr && embd != nullptr &&
      out.would_pack("output.weight", embd->dtype, embd->shape.size())) {
    out.declare("output.weight", embd->shape.size());  // the tied head, packed once here rather than at every load
    sources.push_back(embd);
  }
  for (size_t i = 0; i < sources.size(); ++i)  // the embedding is read again for the tied head: kept
    out.write(i, in->tensor(sources[i]->name), 0, /*release_mapped=*/sources[i] != embd);
  const GgufModelWriter::Report r = out.finish();
  return GgufPackReport{r.packed, r.rows, r.bytes};
}

}  // namespace db

#include "model/gguf_pack.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "io/gguf.h"
#include "io/gguf_writer.h"
#include "io/mapped_range.h"
#include "kernels/packed_weights.h"
#include "tensor/panel_layout.h"
#include "util/error.h"
#include "util/fd_write.h"

namespace db {

namespace {

// Pre-packed tensors start on page boundaries: whole pages per matrix, so a
// loader that unpacks one can hand its pages back (io/mapped_range.h).
constexpr uint64_t kPackedAlignment = 4096;

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

struct PackPlanEntry {
  const GGUFTensorInfo* in;  // nullptr for the tied head's copy of token_embd
  std::string name;
  bool packed;
  uint64_t offset;  // in the output's data section
};

class OutputFile {
 public:
  explicit OutputFile(const std::string& path) : path_(path), fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644)) {
    if (fd_ < 0) throw Error(sys_error(path, "cannot create file"));
  }
  ~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write_at(uint64_t offset, const void* p, size_t n) {
    write_all_at(fd_, std::string_view(static_cast<const char*>(p), n), offset, path_);
  }
  void finish(uint64_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0 || ::close(fd_) != 0) {
      fd_ = -1;
      throw Error(sys_error(path_, "write failed"));
    }
    fd_ = -1;
  }

 private:
  std::string path_;
  int fd_;
};

// Writes the matrices of t (one, or a stack of experts) pre-packed at `at`.
void write_packed(OutputFile& out, uint64_t at, const TensorView& t, ThreadPool* pool) {
  const int64_t rows = t.shape[t.shape.size() - 2], cols = t.cols();
  const int64_t matrices = rows == 0 ? 0 : t.rows() / rows;
  TensorView m{t.dtype, {rows, cols}, nullptr};
  const auto packed_bytes = static_cast<size_t>(panel_matrix_bytes(t.dtype, rows, cols));
  std::vector<uint8_t> buf(packed_bytes);
  for (int64_t i = 0; i < matrices; ++i) {
    m.data = static_cast<const uint8_t*>(t.data) + static_cast<size_t>(i) * m.nbytes();
    kernels::pack_matrix(m, buf.data(), pool);
    out.write_at(at + static_cast<uint64_t>(i) * packed_bytes, buf.data(), buf.size());
  }
}

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
  GGUFWriter w(std::max<uint64_t>(in->alignment(), kPackedAlignment));
  for (const auto& [key, value] : in->metadata()) {
    if (key == "general.alignment" || key == kGGUFPanelVersionKey || key == kGGUFPanelLevelKey) continue;
    w.add_value(key, value);
  }
  w.add_uint32(kGGUFPanelVersionKey, kPanelLayoutVersion);
  w.add_string(kGGUFPanelLevelKey, isa_name(level));

  auto packs = [&](const std::string& name, const GGUFTensorInfo& t) {
    return loader_multiplies_whole(name) && t.shape.size() >= 2 && kernels::prefers_packed(t.dtype, level);
  };
  std::vector<PackPlanEntry> plan;
  for (const GGUFTensorInfo& t : in->tensor_infos()) {
    if (t.layout != TensorLayout::Rows)
      throw Error(in_path + ": tensor '" + t.name + "' is already pre-packed: pack the original model file");
    plan.push_back({&t, t.name, packs(t.name, t), 0});
  }
  const GGUFTensorInfo* embd = in->find_tensor("token_embd.weight");
  if (in->find_tensor("output.weight") == nullptr && embd != nullptr && packs("output.weight", *embd))
    plan.push_back({embd, "output.weight", true, 0});  // the tied head, packed once here rather than at every load
  for (PackPlanEntry& e : plan)
    e.offset = w.reserve_tensor(e.name, e.in->dtype, e.in->shape,
                                e.packed ? TensorLayout::Panels16 : TensorLayout::Rows);

  OutputFile out(out_path);
  const std::vector<uint8_t> header = w.header_bytes();
  out.write_at(0, header.data(), header.size());
  GgufPackReport report;
  for (const PackPlanEntry& e : plan) {
    const TensorView t = in->tensor(e.in->name);
    const uint64_t at = header.size() + e.offset;
    if (e.packed) {
      write_packed(out, at, t, pool);
      ++report.packed;
    } else {
      out.write_at(at, t.data, t.nbytes());
      ++report.copied;
    }
    if (e.in != embd) release_mapped_range(t.data, t.nbytes());
  }
  report.bytes = header.size() + w.data_size();
  out.finish(report.bytes);
  return report;
}

}  // namespace db

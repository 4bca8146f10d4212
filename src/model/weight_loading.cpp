#include "model/weight_loading.h"

#include <cstdio>

#include "io/gguf.h"
#include "io/mapped_range.h"
#include "kernels/dequantize.h"
#include "kernels/matmul.h"
#include "model/model_source.h"
#include "util/error.h"
#include "util/numa_nodes.h"

namespace db {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  TensorView v;
  v.shape = s;
  return v.shape_str();
}

// True if t's bytes lie inside the mapping of a GGUF source (a checkpoint's
// tensors may live in memory of their own).
bool in_file_mapping(const ModelSource& src, const TensorView& t) {
  if (src.gguf() == nullptr) return false;
  const MappedFile& m = src.gguf()->mapping();
  const auto begin = reinterpret_cast<uintptr_t>(m.data()), p = reinterpret_cast<uintptr_t>(t.data);
  return m.data() != nullptr && p >= begin && p - begin <= m.size() && t.nbytes() <= m.size() - (p - begin);
}

}  // namespace

void check_tensor(const ModelSource& src, const std::string& stored, const TensorView& t,
                  const std::vector<int64_t>& shape) {
  if (t.shape != shape)
    throw Error(src.path() + ": tensor '" + stored + "' has shape " + t.shape_str() + ", expected " + shape_str(shape));
  if (!kernels::can_dequantize(t.dtype))
    throw Error(src.path() + ": tensor '" + stored + "' has dtype " + dtype_name(t.dtype) +
                ", which this build cannot compute with");
}

TensorView expect_tensor(const ModelSource& src, const std::string& name, const std::vector<int64_t>& shape) {
  TensorView t = src.tensor(name);
  check_tensor(src, src.stored_name(name), t, shape);
  return t;
}

std::vector<float> load_f32(const ModelSource& src, const std::string& name, int64_t rows, int64_t cols) {
  const std::vector<int64_t> shape = cols == 0 ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, cols};
  TensorView t = expect_tensor(src, name, shape);
  const int64_t n_rows = cols == 0 ? 1 : rows, row_len = cols == 0 ? rows : cols;
  std::vector<float> out(static_cast<size_t>(n_rows * row_len));
  for (int64_t r = 0; r < n_rows; ++r) kernels::dequantize_row(t, r, out.data() + r * row_len);
  return out;
}

TensorView MatrixPreparer::operator()(const TensorView& w, bool keep_source) const {
  if (src.device() != Device::Cpu) return w;  // a device backend uploads the file's rows (LoadOptions::device)
  TensorView out = packed.prepare(w, pool);
  if (out.data != w.data && !keep_source && in_file_mapping(src, w)) release_mapped_range(w.data, w.nbytes());
  if (!keep_source) src.note_prepared(w, out);  // a converted matrix is freed once wholly repacked
  return out;
}

void MatrixPreparer::done_with(const TensorView& w) const {
  if (in_file_mapping(src, w)) release_mapped_range(w.data, w.nbytes());
  src.note_done_with(w);
}

void report_prepared_weights(const ModelSource& src, const kernels::PackedWeightStore& packed,
                             std::chrono::steady_clock::time_point start, int64_t built) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const kernels::PackedWeightStore::Counts& n = packed.counts();
  std::string how;
  auto add = [&](int64_t count, const char* what) {
    if (count > 0) how += (how.empty() ? "" : ", ") + std::to_string(count) + what;
  };
  add(n.in_place, " pre-packed matrices mapped in place");
  add(n.packed, " matrices repacked into panels");
  add(n.unpacked, " pre-packed matrices unpacked into rows");
  if (const GGUFFile* g = src.gguf(); g != nullptr && n.unpacked > 0)
    how += " (the file is packed for " + g->opt_string(kGGUFPanelLevelKey).value_or("?") + ", this process runs " +
           cpu_features().level_name + ")";
  add(built, " matrices built from others (MLA's W_UK^T from attn_kv_b)");
  if (how.empty()) how = "every matrix used as stored";
  std::fprintf(stderr, "%s: weights ready in %.2f s: %s for %s\n", src.path().c_str(), s, how.c_str(),
               cpu_features().level_name.c_str());
}

void replicate_weights(const ModelSource& src, DecoderGlobalWeights& w) {
  const std::vector<NodeCpus> slots = node_layout();
  if (slots.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  std::vector<int> nodes;
  std::string names;
  for (const NodeCpus& slot : slots) {
    nodes.push_back(slot.memory_node);
    names += (names.empty() ? "" : ",") + std::to_string(slot.memory_node);
  }
  w.replicas = kernels::WeightReplicas(w.packed.handed_out(), nodes);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double mib = static_cast<double>(w.replicas.bytes_per_copy()) / (1 << 20);
  std::string unmoved;
  if (w.replicas.originals_not_moved() > 0)
    unmoved = "; " + std::to_string(w.replicas.originals_not_moved()) + " of the original's " +
              std::to_string(w.replicas.ranges()) + " ranges stay where they are (the kernel would not move them)";
  std::fprintf(stderr,
               "%s: NUMA replicate: the weights the matmuls read (%.1f MiB) on each of nodes %s, one copy per node "
               "after the first (which reads the original), made in %.2f s: +%.1f MiB (weights x (nodes - 1))%s\n",
               src.path().c_str(), mib, names.c_str(), s, mib * static_cast<double>(slots.size() - 1),
               unmoved.c_str());
}

void load_token_embedding(const ModelSource& src, const ModelConfig& c, DecoderGlobalWeights& w) {
  w.token_embd = expect_tensor(src, "token_embd.weight", {c.vocab, c.hidden});
}

void load_output_head(const ModelSource& src, const ModelConfig& c, const MatrixPreparer& prepare,
                      DecoderGlobalWeights& w) {
  w.output_norm = load_f32(src, "output_norm.weight", c.hidden);
  w.output = c.tied_embeddings ? prepare(w.token_embd, /*keep_source=*/true)
                               : prepare(expect_tensor(src, "output.weight", {c.vocab, c.hidden}));
}

}  // namespace db

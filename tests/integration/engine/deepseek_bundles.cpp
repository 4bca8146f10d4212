#include "deepseek_bundles.h"

#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "gguf_copy.h"
#include "io/gguf.h"
#include "scratch_dir.h"

namespace db::test {

const std::string& deepseek_model_file(const std::string& fixture, const std::string& format) {
  static std::mutex mu;
  static ScratchDir dir("deepseek_bundles");  // the tokenizer copies, removed at exit
  static std::map<std::string, std::string> files;
  std::lock_guard<std::mutex> lock(mu);
  const std::string key = fixture + "-" + format;
  auto it = files.find(key);
  if (it != files.end()) return it->second;
  const std::string copy = dir.file(key + ".gguf");
  write_with_tokenizer(std::string(DB_TEST_DATA) + "/model/" + fixture + "/model-" + format + ".gguf", copy);
  return files.emplace(key, copy).first->second;
}

const std::string& deepseek_mtp_file() {
  constexpr float kAttentionScale = 8.0f;
  static std::mutex mu;
  static ScratchDir dir("deepseek_mtp");
  static std::string file;
  std::lock_guard<std::mutex> lock(mu);
  if (!file.empty()) return file;
  const std::string base = deepseek_model_file("deepseek_v3_tiny", "f32");
  auto in = GGUFFile::open(base);
  const TensorView embd = in->tensor("token_embd.weight");
  const int64_t h = embd.cols();
  std::vector<float> normed(static_cast<size_t>(embd.rows() * h));
  for (int64_t r = 0; r < embd.rows(); ++r) {
    const auto* row = reinterpret_cast<const float*>(embd.row(r));
    double sum = 0;
    for (int64_t i = 0; i < h; ++i) sum += double{row[i]} * row[i];
    const double scale = 1.0 / std::sqrt(sum / static_cast<double>(h));
    for (int64_t i = 0; i < h; ++i) normed[static_cast<size_t>(r * h + i)] = static_cast<float>(row[i] * scale);
  }
  std::vector<float> eh(static_cast<size_t>(h * 2 * h), 0.0f), ones(static_cast<size_t>(h), 1.0f);
  for (int64_t i = 0; i < h; ++i) eh[static_cast<size_t>(i * 2 * h + i)] = 1.0f;
  const TensorView out_norm = in->tensor("output_norm.weight");
  const std::string block = "blk.2.", count = "deepseek2.block_count", dense = "deepseek2.leading_dense_block_count";
  const std::string path = dir.file("v3-mtp.gguf");
  copy_gguf(
      base, path,
      [&](GGUFWriter& w) {
        w.add_uint32(count, 1);
        w.add_uint32(dense, 0);
        w.add_tensor("token_embd.weight", DType::F32, embd.shape, normed.data(), normed.size() * sizeof(float));
        for (const GGUFTensorInfo& t : in->tensor_infos()) {
          if (t.name.rfind(block, 0) != 0) continue;
          const TensorView v = in->tensor(t.name);
          const std::string suffix = t.name.substr(block.size());
          // Attention's output scaled up, so that the context weighs in the drafts.
          std::vector<float> scaled;
          if (suffix == "attn_output.weight") {
            const auto* f = reinterpret_cast<const float*>(v.data);
            for (size_t i = 0; i < v.nbytes() / sizeof(float); ++i) scaled.push_back(f[i] * kAttentionScale);
          }
          for (const char* layer : {"blk.0.", "blk.1."})
            w.add_tensor(layer + suffix, v.dtype, v.shape, scaled.empty() ? v.data : scaled.data(), v.nbytes());
        }
        const auto bytes = static_cast<size_t>(h) * sizeof(float);
        w.add_tensor("blk.1.nextn.eh_proj.weight", DType::F32, {h, 2 * h}, eh.data(), eh.size() * sizeof(float));
        w.add_tensor("blk.1.nextn.enorm.weight", DType::F32, {h}, ones.data(), bytes);
        w.add_tensor("blk.1.nextn.hnorm.weight", DType::F32, {h}, ones.data(), bytes);
        w.add_tensor("blk.1.nextn.shared_head_norm.weight", DType::F32, {h}, out_norm.data, bytes);
      },
      [&](const std::string& name) {
        return name != "token_embd.weight" && name.rfind("blk.", 0) != 0 && name != count && name != dense;
      });
  file = path;
  return file;
}

ModelBundle& deepseek_mtp_bundle() {
  static std::mutex mu;
  static std::unique_ptr<ModelBundle> b;
  std::lock_guard<std::mutex> lock(mu);
  if (!b) b = ModelBundle::open(deepseek_mtp_file(), 2);
  return *b;
}

ModelBundle& deepseek_bundle(const std::string& fixture, const std::string& format) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<ModelBundle>> bundles;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ModelBundle>& b = bundles[fixture + "-" + format];
  if (!b) b = ModelBundle::open(deepseek_model_file(fixture, format), 2);
  return *b;
}

}  // namespace db::test

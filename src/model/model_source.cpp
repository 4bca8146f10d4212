#include "model/model_source.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "util/error.h"

namespace db {

namespace fs = std::filesystem;

ModelSource::~ModelSource() = default;

std::unique_ptr<ModelSource> ModelSource::open(const std::string& path) {
  std::unique_ptr<ModelSource> src(new ModelSource());
  src->path_ = path;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    src->hf_ = HFCheckpoint::open(path);
  } else if (fs::is_regular_file(path, ec)) {
    if (fs::path(path).extension() != ".gguf")
      throw Error(path + ": not a model; expected a .gguf file or a Hugging Face checkpoint directory");
    src->gguf_ = GGUFFile::open(path);
  } else {
    throw Error(path + ": no such model file or directory");
  }
  return src;
}

std::string ModelSource::config_path() const { return gguf_ ? path_ : (fs::path(path_) / "config.json").string(); }

std::string ModelSource::architecture() const {
  if (gguf_) {
    auto arch = gguf_->opt_string("general.architecture");
    if (!arch) throw Error(path_ + ": missing required GGUF key 'general.architecture'");
    return *arch;
  }
  const nlohmann::json& cfg = hf_->config();
  auto it = cfg.find("model_type");
  if (it == cfg.end() || !it->is_string()) throw Error(config_path() + ": missing required key 'model_type'");
  const std::string model_type = it->get<std::string>();
  if (model_type == "deepseek_v2" || model_type == "deepseek_v3") return "deepseek2";
  return model_type;
}

std::string ModelSource::stored_name(const std::string& gguf_name) const {
  return gguf_ ? gguf_name : hf_tensor_name(gguf_name);
}

std::optional<TensorView> ModelSource::find(const std::string& gguf_name) const {
  if (gguf_) {
    if (!gguf_->find_tensor(gguf_name)) return std::nullopt;
    return gguf_->tensor(gguf_name);
  }
  const std::string name = hf_tensor_name(gguf_name);
  if (name.empty()) return std::nullopt;
  return hf_->find(name);
}

TensorView ModelSource::tensor(const std::string& gguf_name) const {
  auto t = find(gguf_name);
  if (!t) throw Error(path_ + ": missing tensor '" + stored_name(gguf_name) + "'");
  return *t;
}

}  // namespace db

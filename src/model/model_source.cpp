#include "model/model_source.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/gguf.h"
#include "io/hf_checkpoint.h"
#include "model/checkpoint_converter.h"
#include "model/registry.h"
#include "util/error.h"

namespace db {

namespace fs = std::filesystem;

namespace {

const Architecture& gguf_architecture(const GGUFFile& f, const std::string& path) {
  auto name = f.opt_string("general.architecture");
  if (!name) throw Error(path + ": missing required GGUF key 'general.architecture'");
  const Architecture* a = find_architecture(*name);
  if (!a)
    throw Error(path + ": architecture '" + *name + "' is not supported (supported: " +
                join_names(supported_architectures()) + ")");
  return *a;
}

const Architecture& hf_architecture(const HFCheckpoint& hf, const std::string& config_path) {
  const nlohmann::json& cfg = hf.config();
  auto it = cfg.find("model_type");
  if (it == cfg.end() || !it->is_string()) throw Error(config_path + ": missing required key 'model_type'");
  const std::string model_type = it->get<std::string>();
  const Architecture* a = find_hf_architecture(model_type);
  if (!a)
    throw Error(config_path + ": model_type '" + model_type + "' is not supported (supported: " +
                join_names(supported_hf_model_types()) + ")");
  return *a;
}

}  // namespace

ModelSource::~ModelSource() = default;

std::unique_ptr<ModelSource> ModelSource::open(const std::string& path, const LoadOptions& options) {
  std::unique_ptr<ModelSource> src(new ModelSource());
  src->path_ = path;
  src->device_ = options.device;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    src->hf_ = HFCheckpoint::open(path);
    src->arch_ = &hf_architecture(*src->hf_, src->config_path());
    CheckpointQuant quant = read_checkpoint_quant(src->hf_->config(), src->config_path());
    if (quant.method != CheckpointQuantMethod::None)
      src->converter_ = std::make_unique<CheckpointConverter>(*src->hf_, quant, options.quantize);
  } else if (fs::is_regular_file(path, ec)) {
    if (fs::path(path).extension() != ".gguf")
      throw Error(path + ": not a model; expected a .gguf file or a Hugging Face checkpoint directory");
    src->gguf_ = GGUFFile::open(path);
    src->arch_ = &gguf_architecture(*src->gguf_, path);
  } else {
    throw Error(path + ": no such model file or directory");
  }
  if (options.quantize && !src->converter_)
    throw Error(path + ": --quantize " + dtype_name(*options.quantize) +
                " applies to FP8, AWQ and GPTQ checkpoints (config.json quantization_config); this model's weights "
                "are used as stored (`deepbatch convert` rewrites a GGUF file in another type)");
  if (options.quantize && !is_load_quantize_type(*options.quantize))
    throw Error(path + ": --quantize " + dtype_name(*options.quantize) + " is not a type weights can be converted to");
  return src;
}

std::string ModelSource::config_path() const { return gguf_ ? path_ : (fs::path(path_) / "config.json").string(); }

const std::string& ModelSource::architecture() const { return arch_->gguf_name; }

std::string ModelSource::stored_name(const std::string& gguf_name) const {
  return gguf_ ? gguf_name : arch_->hf_names.hf_name(gguf_name);
}

std::optional<TensorView> ModelSource::find(const std::string& gguf_name) const {
  if (gguf_) {
    if (!gguf_->find_tensor(gguf_name)) return std::nullopt;
    return gguf_->tensor(gguf_name);
  }
  const std::string name = arch_->hf_names.hf_name(gguf_name);
  if (name.empty()) return std::nullopt;
  return find_stored(name);
}

std::optional<TensorView> ModelSource::find_stored(const std::string& stored) const {
  if (gguf_) return find(stored);
  if (converter_)
    if (auto t = converter_->find(stored)) return t;
  return hf_->find(stored);
}

bool ModelSource::contains(const std::string& gguf_name) const {
  if (gguf_) return gguf_->find_tensor(gguf_name) != nullptr;
  const std::string name = arch_->hf_names.hf_name(gguf_name);
  if (name.empty()) return false;
  return hf_->find(name).has_value() || (converter_ && converter_->converts(name));
}

void ModelSource::note_prepared(const TensorView& source, const TensorView& prepared) const {
  if (converter_) converter_->prepared(source, prepared);
}

void ModelSource::note_done_with(const TensorView& source) const {
  if (converter_) converter_->done_with(source);
}

TensorView ModelSource::tensor(const std::string& gguf_name) const {
  auto t = find(gguf_name);
  if (!t) throw Error(path_ + ": missing tensor '" + stored_name(gguf_name) + "'");
  return *t;
}

}  // namespace db

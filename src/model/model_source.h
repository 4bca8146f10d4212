// An opened model: a GGUF file or a Hugging Face checkpoint directory, with its
// tensors addressed by their GGUF names whatever the format ("blk.3.attn_q.weight"
// finds "model.layers.3.self_attn.q_proj.weight" in a checkpoint). The mapped
// files live as long as the source; tensor views point into them.
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "tensor/tensor.h"

namespace db {

class GGUFFile;
class HFCheckpoint;
struct Architecture;

class ModelSource {
 public:
  // A path ending in ".gguf" that is a file opens as GGUF; a directory as an HF
  // checkpoint. Anything else throws db::Error, as does an architecture (GGUF
  // general.architecture, config.json model_type) that no registry entry handles;
  // that error lists the supported ones.
  static std::unique_ptr<ModelSource> open(const std::string& path);
  ~ModelSource();
  ModelSource(const ModelSource&) = delete;
  ModelSource& operator=(const ModelSource&) = delete;

  const std::string& path() const { return path_; }
  // Exactly one of these is non-null.
  const GGUFFile* gguf() const { return gguf_.get(); }
  const HFCheckpoint* hf() const { return hf_.get(); }
  // The file metadata describes: GGUF metadata, or "<dir>/config.json".
  std::string config_path() const;
  // The registry entry of this model's architecture (model/registry.h).
  const Architecture& arch() const { return *arch_; }
  // The architecture in GGUF spelling ("llama", "qwen2"); for a checkpoint, the
  // entry whose hf_model_types holds config.json's model_type.
  const std::string& architecture() const;

  // The tensor stored under `gguf_name` (or its checkpoint equivalent); nullopt when absent.
  std::optional<TensorView> find(const std::string& gguf_name) const;
  // As find, but throws db::Error naming the file and the stored name when absent.
  TensorView tensor(const std::string& gguf_name) const;
  // The name the tensor has in this file ("lm_head.weight" for "output.weight" in a
  // checkpoint, through arch().hf_names); empty when a checkpoint has no equivalent.
  std::string stored_name(const std::string& gguf_name) const;

 private:
  ModelSource() = default;
  std::string path_;
  std::unique_ptr<GGUFFile> gguf_;
  std::unique_ptr<HFCheckpoint> hf_;
  const Architecture* arch_ = nullptr;  // a registry entry; set by open
};

}  // namespace db

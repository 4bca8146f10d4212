// An opened model: a GGUF file or a Hugging Face checkpoint directory, with its
// tensors addressed by their GGUF names whatever the format ("blk.3.attn_q.weight"
// finds "model.layers.3.self_attn.q_proj.weight" in a checkpoint). The mapped
// files live as long as the source; tensor views point into them, or into the
// matrices a quantized checkpoint's converter holds (model/checkpoint_converter.h).
#pragma once
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "model/load_options.h"
#include "tensor/tensor.h"

namespace db {

class CheckpointConverter;
class GGUFFile;
class HFCheckpoint;
struct Architecture;

class ModelSource {
 public:
  // A path ending in ".gguf" that is a file opens as GGUF; a directory as an HF
  // checkpoint. Anything else throws db::Error, as does an architecture (GGUF
  // general.architecture, config.json model_type) that no registry entry handles;
  // that error lists the supported ones. A checkpoint whose config.json has a
  // quantization_config (FP8, AWQ, GPTQ) gets a converter that serves its
  // matrices converted into options.quantize (or the method's default type);
  // options.quantize on any other source throws db::Error.
  static std::unique_ptr<ModelSource> open(const std::string& path, const LoadOptions& options = {});
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
  // Where the model built from this source computes (LoadOptions::device).
  Device device() const { return device_; }
  // The architecture in GGUF spelling ("llama", "qwen2"); for a checkpoint, the
  // entry whose hf_model_types holds config.json's model_type.
  const std::string& architecture() const;

  // The tensor stored under `gguf_name` (or its checkpoint equivalent); nullopt when absent.
  // A quantized checkpoint's matrix is converted on first request (see converter()).
  std::optional<TensorView> find(const std::string& gguf_name) const;
  // As find, by the name the tensor has in the file (a checkpoint name for a checkpoint).
  std::optional<TensorView> find_stored(const std::string& stored) const;
  // True when find(gguf_name) would find a tensor; converts nothing.
  bool contains(const std::string& gguf_name) const;
  // As find, but throws db::Error naming the file and the stored name when absent.
  TensorView tensor(const std::string& gguf_name) const;
  // The name the tensor has in this file ("lm_head.weight" for "output.weight" in a
  // checkpoint, through arch().hf_names); empty when a checkpoint has no equivalent.
  std::string stored_name(const std::string& gguf_name) const;

  // The converter of a quantized checkpoint; nullptr for any other source.
  CheckpointConverter* converter() const { return converter_.get(); }
  // The loader copied `source` into `prepared` (or kept it when they are the same
  // view) / no longer reads `source`: lets the converter free what it converted.
  // No effect on tensors that were not converted.
  void note_prepared(const TensorView& source, const TensorView& prepared) const;
  void note_done_with(const TensorView& source) const;

 private:
  ModelSource() = default;
  std::string path_;
  std::unique_ptr<GGUFFile> gguf_;
  std::unique_ptr<HFCheckpoint> hf_;
  std::unique_ptr<CheckpointConverter> converter_;  // a quantized checkpoint's, else null
  const Architecture* arch_ = nullptr;  // a registry entry; set by open
  Device device_ = Device::Cpu;
};

}  // namespace db

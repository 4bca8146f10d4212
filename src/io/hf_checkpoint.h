// A Hugging Face checkpoint directory: config.json, the weights as one
// model.safetensors or as shards listed by model.safetensors.index.json, and the
// tokenizer files when present.
//
// Contract: `open` reads and validates config.json and every shard (each opened
// once), and checks that every tensor the index names is present in its shard;
// errors throw db::Error naming the file.
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "io/safetensors.h"

namespace db {

class HFCheckpoint {
 public:
  static std::unique_ptr<HFCheckpoint> open(const std::string& dir);
  ~HFCheckpoint();
  HFCheckpoint(const HFCheckpoint&) = delete;
  HFCheckpoint& operator=(const HFCheckpoint&) = delete;

  const std::string& dir() const { return dir_; }
  // The parsed config.json (a JSON object).
  const nlohmann::json& config() const { return *config_; }
  // Paths of tokenizer.json / tokenizer_config.json; nullopt when the file is absent.
  const std::optional<std::string>& tokenizer_json_path() const { return tokenizer_json_path_; }
  const std::optional<std::string>& tokenizer_config_path() const { return tokenizer_config_path_; }
  // The parsed tokenizer_config.json; nullptr when the file is absent.
  const nlohmann::json* tokenizer_config() const { return tokenizer_config_.get(); }

  // Tensor names over all shards, sorted.
  std::vector<std::string> tensor_names() const;
  size_t num_shards() const { return shards_.size(); }
  // nullopt when no shard holds the tensor.
  std::optional<TensorView> find(const std::string& name) const;
  // Throws db::Error naming the directory and the tensor when it is missing.
  TensorView tensor(const std::string& name) const;
  // The path of the shard that holds `name`; the directory when none does.
  std::string file_of(const std::string& name) const;

 private:
  HFCheckpoint() = default;
  void open_single(const std::string& path);
  void open_sharded(const std::string& index_path);

  std::string dir_;
  std::unique_ptr<nlohmann::json> config_;
  std::unique_ptr<nlohmann::json> tokenizer_config_;
  std::optional<std::string> tokenizer_json_path_;
  std::optional<std::string> tokenizer_config_path_;
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, size_t> tensor_shard_;  // tensor name -> index into shards_
};

// The chat template of the checkpoint in `dir`: tokenizer_config.json's
// "chat_template", a string or a list of {name, template} (the one named
// "default"); nullopt when the file or the key is absent. Throws db::Error
// naming the file when it is not valid JSON or the key has another shape.
std::optional<std::string> hf_chat_template(const std::string& dir);

}  // namespace db

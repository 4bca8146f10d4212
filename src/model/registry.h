// The supported model architectures. Each entry owns everything that differs by
// architecture outside its model class: its names, the arch-specific part of config
// reading, and its checkpoint tensor names. Adding an architecture is one entry in
// registry.cpp plus its own files (see llama_arch.cpp); nothing else branches on the name.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/tensor_name_map.h"

namespace db {

class Model;
class ModelSource;
class GGUFWriter;
class ThreadPool;
struct ModelConfig;
struct GGUFConfigKeys;
struct HFConfigKeys;

// Builds the model from an opened source; `load_pool`, when not null, is where the
// work of loading (repacking weights) runs. It is used only during the call.
using ModelFactory = std::unique_ptr<Model> (*)(std::unique_ptr<ModelSource> src, ThreadPool* load_pool);

// The arch-specific part of reading a configuration. It runs after the shared reader
// (config_gguf.cpp / config_hf.cpp) has filled the common fields of `c` from the same
// keys; it sets what only this architecture has and may override any common field.
// Missing required keys throw db::Error (the keys' req* readers name file and key).
using GGUFConfigReader = void (*)(const GGUFConfigKeys& keys, ModelConfig& c);
using HFConfigReader = void (*)(const HFConfigKeys& keys, ModelConfig& c);
// The inverse of GGUFConfigReader: adds the arch-specific GGUF metadata from
// which read_gguf reads `c` back (model/config_gguf_writer.h writes the rest).
using GGUFConfigWriter = void (*)(const ModelConfig& c, GGUFWriter& w);

// One architecture. Every registered entry has all fields set (non-empty, non-null).
struct Architecture {
  std::string gguf_name;                    // GGUF general.architecture and ModelConfig::arch: "llama"
  std::vector<std::string> hf_model_types;  // config.json model_type values that mean it: {"llama"}
  ModelFactory build;                       // builds the model from a source of this architecture
  GGUFConfigReader read_gguf;               // arch-specific config from GGUF metadata
  HFConfigReader read_hf;                   // arch-specific config from config.json
  TensorNameMap hf_names;                   // GGUF tensor name -> checkpoint tensor name
  GGUFConfigWriter write_gguf;              // arch-specific config as GGUF metadata (read_gguf's inverse)
  // GGUF files of this architecture hold attn_q / attn_k rows as llama.cpp's
  // converter permutes them (each head's rotated pairs adjacent, read with
  // interleaved RoPE), where a checkpoint holds them as transformers does.
  bool gguf_pairs_qk_rows = false;
};

// Every registered architecture, sorted by gguf_name; names and model types are unique.
const std::vector<Architecture>& architectures();
// The entry whose gguf_name is `gguf_name`; nullptr when none.
const Architecture* find_architecture(const std::string& gguf_name);
// The entry listing `model_type` in hf_model_types; nullptr when none.
const Architecture* find_hf_architecture(const std::string& model_type);
// Every gguf_name, sorted.
std::vector<std::string> supported_architectures();
// Every hf_model_types value, sorted.
std::vector<std::string> supported_hf_model_types();
// "a, b, c": for error messages listing what is supported.
std::string join_names(const std::vector<std::string>& names);

}  // namespace db

// Command-line options shared by several deepbatch subcommands.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "model/load_options.h"
#include "sample/sampling_params.h"
#include "tensor/dtype.h"

namespace db {
class ModelBundle;
}

namespace db::cli {

struct ModelOptions {
  std::string model;            // .gguf file or Hugging Face checkpoint directory
  int threads = 0;              // compute threads; 0 = all cores
  int block_size = 16;          // KV block size in tokens
  std::string kv_dtype = "f16";  // KV cache element type: f16, bf16, f32
  std::string quantize;          // a quantized checkpoint's matrices converted to this type; "" = its default
  bool pack = false;             // load a GGUF file through its pre-packed copy (model/packed_cache.h)
  std::string device = "cpu";    // where the model computes: cpu | cuda (backend/backend_device.h)
};

struct SamplingOptions {
  float temperature = 0.0f;  // CLI default is greedy
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::optional<uint64_t> seed;
  int32_t max_tokens = 128;
  bool ignore_eos = false;
};

void add_model_options(CLI::App& app, ModelOptions& o);
// How the model is loaded: --quantize, --pack and --device as LoadOptions. Throws
// db::Error for an unknown type, a device this build or machine cannot compute on
// (backend/backend_device.h says why), or --pack with --device cuda.
LoadOptions load_options(const ModelOptions& o);
void add_sampling_options(CLI::App& app, SamplingOptions& o);

// Validated sampling parameters; throws db::Error naming the bad option.
SamplingParams to_sampling_params(const SamplingOptions& o);
// "f16" | "bf16" | "f32" -> DType; throws db::Error otherwise.
DType parse_kv_dtype(const std::string& s);

// How chat answers are read (run and serve):
//   --reasoning-parser auto|deepseek_r1|none: whether "<think>" reasoning goes to
//     reasoning_content; auto: when the chat template thinks.
//   --tool-call-parser auto|hermes|deepseek_v3|none: the format tool calls are read
//     in with tool_choice auto; auto: the one the chat template renders.
struct OutputParserOptions {
  std::string reasoning = "auto";
  std::string tool_calls = "auto";
};
void add_output_parser_options(CLI::App& app, OutputParserOptions& o);
void apply_output_parsers(ModelBundle& bundle, const OutputParserOptions& o);

}  // namespace db::cli

// A Hugging Face checkpoint directory (config.json, one or several
// safetensors shards, tokenizer.json; plain, FP8, AWQ or GPTQ) written as one
// GGUF model file that deepbatch loads with the same outputs as the directory
// (`deepbatch convert DIR -o OUT.gguf`):
//   - the configuration as the GGUF keys config_from_gguf reads
//     (model/config_gguf_writer.h), general.name the directory's name;
//   - the tokenizer (tokenizer.json, tokenizer_config.json,
//     generation_config.json) as tokenizer.ggml.* keys
//     (tokenizer/tokenizer_gguf_keys.h), the chat template as
//     tokenizer.chat_template;
//   - every tensor a loader reads, under its GGUF name: the matrices of a
//     quantized checkpoint converted as loading the directory converts them
//     (LoadOptions::quantize, model/checkpoint_converter.h: the same bytes),
//     the rest as stored; a DeepSeekMoE layer's routed experts stacked into
//     one tensor per projection; where the architecture's GGUF files pair the
//     rotated rows (Architecture::gguf_pairs_qk_rows: llama), attn_q / attn_k
//     reordered as llama.cpp's converter does. Tensors no loader reads are
//     left out.
// With a pack level the matrices the loaders would repack are written
// pre-packed for it (model/gguf_model_writer.h): the file then loads by
// mapping them.
//
// The written file is opened again and its configuration, tokenizer and chat
// template compared with the directory's; where they differ (something the
// GGUF keys cannot say), the file is removed and db::Error names the
// difference. Bad checkpoints (no config.json, a truncated shard, a missing
// scale or zero-point tensor) throw db::Error naming the file and tensor, as
// loading them does, and leave no output file.
//
// Memory: one tensor at a time. A converted matrix is freed once written, a
// stored tensor's mapped pages are handed back as its rows are written
// (io/mapped_range.h), and rows are packed a chunk at a time, so the peak
// stays near the largest converted matrix plus one chunk
// (model/gguf_model_writer.h) above the process's own, however many shards
// the checkpoint has; never the model in a float type.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "model/load_options.h"
#include "util/cpu_features.h"
#include "util/thread_pool.h"

namespace db {

struct CheckpointGgufReport {
  int64_t tensors = 0;       // tensors written
  int64_t packed = 0;        // of which pre-packed
  uint64_t bytes = 0;        // size of the file
  std::string conversion;    // the converter's summary line; empty for a plain checkpoint
  size_t peak_converted_bytes = 0;  // the most converted bytes held at once
};

// Converts checkpoint `dir` into `out_path`; options.quantize as loading the
// directory takes it (refused for a plain checkpoint); `pack_level`: nullopt
// writes rows only. Matrices are converted and packed on `pool` when given.
CheckpointGgufReport convert_checkpoint_to_gguf(const std::string& dir, const std::string& out_path,
                                                const LoadOptions& options, std::optional<IsaLevel> pack_level,
                                                ThreadPool* pool = nullptr);

}  // namespace db

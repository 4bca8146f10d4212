// Command-line options of the continuous-batching engine, shared by the
// subcommands that run one (run, serve, generate, chat, bench).
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>

#include "cli_options.h"
#include "engine/engine.h"

namespace db::cli {

struct EngineOptions {
  int max_num_seqs = EngineConfig{}.max_num_seqs;                      // running sequences at most
  int max_num_batched_tokens = EngineConfig{}.max_num_batched_tokens;  // tokens per step at most
  int long_prefill_threshold = 0;                                      // 0 = auto
  int64_t kv_cache_memory = 0;                                         // bytes; 0 = a share of available memory
  bool enable_prefix_caching = true;                                   // reuse KV of identical prompt prefixes
};

// Registers the options; --max-num-seqs only when `with_max_num_seqs`.
void add_engine_options(CLI::App& app, EngineOptions& o, bool with_max_num_seqs = true);

// The engine configuration of the model and engine options.
EngineConfig make_engine_config(const ModelOptions& model, const EngineOptions& engine);

}  // namespace db::cli

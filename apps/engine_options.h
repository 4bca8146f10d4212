// Command-line options of the continuous-batching engine, shared by the
// subcommands that run one (run, serve, generate, chat, bench).
#pragma once
#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <string>

#include "cli_options.h"
#include "dist/parallel_config.h"
#include "engine/engine.h"

namespace db::cli {

struct EngineOptions {
  int max_num_seqs = 0;            // running sequences at most (0 = 64; MoE models: engine/moe_batch_sizing.h)
  int max_num_batched_tokens = 0;  // tokens per step at most (0 = 2048; MoE models: as above)
  int long_prefill_threshold = 0;                                      // 0 = auto
  std::string prefill_cost = "fitted";                                 // fitted | shape | tokens
  double gpu_memory_utilization = 0.9;                                  // --device cuda: device memory share
  int64_t kv_cache_memory = 0;                                         // bytes; 0 = a share of available memory
  bool enable_prefix_caching = true;                                   // reuse KV of identical prompt prefixes
  std::string admission = "reserve";                                   // reserve | first-chunk
  int decode_headroom = EngineConfig{}.decode_headroom;                // reserve: outputs reserved per sequence
  std::string kv_watermarks = "0,0.05,0.1";                            // per class: pool share kept free
  std::string max_queue_wait = "0,0,0";                                // per class: seconds (0 = no limit)
  std::string queue_timeout_action = "promote";                        // promote | reject
  int interactive_step_tokens = EngineConfig{}.interactive_step_tokens;  // 0 = no cap
  double interactive_hold = EngineConfig{}.interactive_hold_s;            // seconds
  std::string memory_guard = "on";                                     // on | off
  double memory_guard_high = MemoryGuardConfig{}.high_water;           // usage / limit: back off
  double memory_guard_low = MemoryGuardConfig{}.low_water;             // usage / limit: recover
  int64_t memory_limit = 0;                                            // bytes; 0 = the cgroup's
  double sla_tpot_p99 = 0, sla_ttft_p99 = 0;                           // seconds; 0 = no target
  double sla_window = EngineConfig{}.sla_window_s;                     // seconds
  std::string speculative = "off";                                     // off | ngram | draft_model | mtp
  std::string speculative_model;                                       // the draft model (implies draft_model)
  int num_speculative_tokens = SpeculativeConfig{}.num_tokens;         // K
  int ngram_min = SpeculativeConfig{}.ngram_min, ngram_max = SpeculativeConfig{}.ngram_max;
  std::string speculative_adaptive = "on";                             // on | off
  dist::ParallelConfig parallel;                                       // the split across mpirun's ranks
  bool runs_split_model = false;  // set by the commands that run a tensor-parallel model (run, serve, bench)
};

// "a,b,c" -> three non-negative numbers, one per priority class; throws
// CLI::ValidationError naming `option` otherwise.
std::array<double, 3> parse_per_class(const std::string& option, const std::string& text);

// Registers the options; --max-num-seqs only when `with_max_num_seqs`.
void add_engine_options(CLI::App& app, EngineOptions& o, bool with_max_num_seqs = true);

// The engine configuration of the model and engine options.
EngineConfig make_engine_config(const ModelOptions& model, const EngineOptions& engine);

}  // namespace db::cli

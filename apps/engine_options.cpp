#include "engine_options.h"

#include "util/thread_pool.h"

namespace db::cli {

void add_engine_options(CLI::App& app, EngineOptions& o, bool with_max_num_seqs) {
  if (with_max_num_seqs)
    app.add_option("--max-num-seqs", o.max_num_seqs, "Running sequences at most")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
  app.add_option("--max-num-batched-tokens,--max-batched-tokens", o.max_num_batched_tokens,
                 "Tokens per engine step at most (prompt chunking)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--long-prefill-threshold", o.long_prefill_threshold,
                 "Prompt chunks longer than this are capped so short prompts run too (0 = auto)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--kv-cache-memory", o.kv_cache_memory,
                 "Bytes for the KV cache, e.g. 2G or 512M (default: a share of available memory)")
      ->transform(CLI::AsSizeValue(false));
  app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", o.enable_prefix_caching,
               "Reuse the KV cache of identical prompt prefixes (default on)");
}

EngineConfig make_engine_config(const ModelOptions& model, const EngineOptions& engine) {
  EngineConfig c;
  c.threads = resolve_threads(model.threads);
  c.max_num_seqs = engine.max_num_seqs;
  c.max_num_batched_tokens = engine.max_num_batched_tokens;
  c.long_prefill_threshold = engine.long_prefill_threshold;
  c.block_size = model.block_size;
  c.kv_dtype = parse_kv_dtype(model.kv_dtype);
  c.kv_cache_memory = engine.kv_cache_memory;
  c.enable_prefix_caching = engine.enable_prefix_caching;
  return c;
}

}  // namespace db::cli

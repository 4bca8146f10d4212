#include "engine_options.h"

#include <cmath>
#include <exception>

#include "engine/option_values.h"
#include "parallel_options.h"
#include "util/thread_pool.h"

namespace db::cli {

void add_engine_options(CLI::App& app, EngineOptions& o, bool with_max_num_seqs) {
  if (with_max_num_seqs)
    app.add_option("--max-num-seqs", o.max_num_seqs,
                   "Running sequences at most (0 = auto: 64; for an MoE model, the batch at which each routed "
                   "expert's product is well past compute-bound, from the measured read bandwidth and int8 peak, "
                   "bounded by the KV pool; the choice is logged at start)")
        ->check(CLI::NonNegativeNumber)
        ->capture_default_str();
  app.add_option("--max-num-batched-tokens,--max-batched-tokens", o.max_num_batched_tokens,
                 "Tokens per engine step at most (prompt chunking; 0 = auto: 2048, for an MoE model at least "
                 "twice the running cap)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--long-prefill-threshold", o.long_prefill_threshold,
                 "Prompt chunks longer than this are capped so short prompts run too (0 = auto)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--prefill-cost", o.prefill_cost,
                 "How a capped prompt chunk is priced: fitted (its tokens' attention over the context before "
                 "them counts, at the rate measured from step times, so chunks deep in a long prompt are "
                 "shorter), shape (the same at the model's MAC ratio) or tokens (tokens only)")
      ->check(CLI::IsMember({"fitted", "shape", "tokens"}))
      ->capture_default_str();
  app.add_option("--kv-cache-memory", o.kv_cache_memory,
                 "Bytes for the KV cache, e.g. 2G or 512M (default: a share of available memory)")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--gpu-memory-utilization", o.gpu_memory_utilization,
                 "--device cuda without --kv-cache-memory: the KV cache takes what is free of this share of the "
                 "device's memory once the weights are in")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", o.enable_prefix_caching,
               "Reuse the KV cache of identical prompt prefixes (default on)");
  app.add_option("--admission", o.admission,
                 "How requests are admitted when the KV cache is short: reserve (only when the prompt and the "
                 "next --decode-headroom outputs fit beside what the running requests still need, so a pool "
                 "that holds a few requests runs a few at a time instead of preempting them in turn) or "
                 "first-chunk (as soon as the first prompt chunk fits, as vLLM does)")
      ->check(CLI::IsMember({"reserve", "first-chunk"}))
      ->capture_default_str();
  app.add_option("--decode-headroom", o.decode_headroom,
                 "--admission reserve: output tokens each request reserves KV blocks for ahead of the ones it "
                 "holds (all its remaining ones when fewer)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--kv-watermarks", o.kv_watermarks,
                 "Per priority class P0,P1,P2: the share of the KV pool that admitting or growing a sequence of "
                 "that class must leave free for more urgent ones")
      ->capture_default_str();
  app.add_option("--max-queue-wait", o.max_queue_wait,
                 "Per priority class P0,P1,P2: seconds a request may wait for admission (0 = no limit); past it "
                 "see --queue-timeout-action")
      ->capture_default_str();
  app.add_option("--queue-timeout-action", o.queue_timeout_action,
                 "What happens to a request past its class's --max-queue-wait: promote (served one class ahead) "
                 "or reject (ended with a queue_timeout error)")
      ->check(CLI::IsMember({"promote", "reject"}))
      ->capture_default_str();
  app.add_option("--interactive-step-tokens", o.interactive_step_tokens,
                 "In a step that serves a priority-0 request, less urgent requests compute at most this many "
                 "tokens, so interactive requests see short steps (0 = no cap)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--interactive-hold", o.interactive_hold,
                 "Seconds the --interactive-step-tokens cap stays on after the last priority-0 work, so the next "
                 "priority-0 request finds a short step in flight")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--memory-guard", o.memory_guard,
                 "Back off (fewer running sequences, admission paused, no new KV memory) before the memory "
                 "limit is reached")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  app.add_option("--memory-guard-high", o.memory_guard_high, "Memory guard: usage / limit at which it backs off")
      ->check(CLI::Range(0.05, 1.0))
      ->capture_default_str();
  app.add_option("--memory-guard-low", o.memory_guard_low, "Memory guard: usage / limit below which it recovers")
      ->check(CLI::Range(0.01, 1.0))
      ->capture_default_str();
  app.add_option("--memory-limit", o.memory_limit,
                 "Memory guard: the limit to keep under, e.g. 8G (default: the process's cgroup limit)")
      ->transform(CLI::AsSizeValue(false));
  app.add_option("--sla-tpot-p99", o.sla_tpot_p99,
                 "Adaptive batch control: the p99 time per output token to hold, in seconds (e.g. 0.1). With a "
                 "target set, the step token budget (up to --max-num-batched-tokens) and the running cap (up to "
                 "--max-num-seqs) are tuned online toward the highest throughput that meets it (0 = off)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sla-ttft-p99", o.sla_ttft_p99,
                 "Adaptive batch control: the p99 time to first token to hold, in seconds (0 = no target)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--sla-window", o.sla_window, "Adaptive batch control: seconds per control window")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--speculative", o.speculative,
                 "Speculative decoding: 'ngram' drafts a decode's next tokens from earlier text of its own prompt "
                 "and output (prompt lookup) and verifies them in the same step; outputs are unchanged, drafts "
                 "are used only while they pay; 'draft_model' drafts with --speculative-model; 'mtp' with the "
                 "model's own multi-token-prediction layer (DeepSeek-V3 files with nextn tensors) (off = none)")
      ->check(CLI::IsMember({"off", "ngram", "draft_model", "mtp"}))
      ->capture_default_str();
  app.add_option("--speculative-model", o.speculative_model,
                 "Speculative decoding with a draft model: a smaller GGUF file (or checkpoint directory) with the "
                 "model's vocabulary, e.g. a 1.5B model of the same family; implies --speculative draft_model");
  app.add_option("--num-speculative-tokens", o.num_speculative_tokens,
                 "Speculative decoding: draft tokens per sequence and step at most")
      ->check(CLI::Range(1, 32))
      ->capture_default_str();
  app.add_option("--ngram-min", o.ngram_min, "Prompt lookup: the shortest n-gram matched")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--ngram-max", o.ngram_max, "Prompt lookup: the longest n-gram matched (tried first)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--speculative-adaptive", o.speculative_adaptive,
                 "Speculative decoding: on = each sequence drafts only while its acceptance rate and the measured "
                 "step cost say drafts pay; off = always draft --num-speculative-tokens when the proposer can")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  add_parallel_options(app, o.parallel);
}

std::array<double, 3> parse_per_class(const std::string& option, const std::string& text) {
  std::array<double, 3> out{};
  size_t pos = 0;
  for (size_t k = 0; k < 3; ++k) {
    const size_t end = k < 2 ? text.find(',', pos) : text.size();
    const std::string item = end == std::string::npos ? std::string() : text.substr(pos, end - pos);
    size_t used = 0;
    double v = -1;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (end == std::string::npos || item.empty() || used != item.size() || !(v >= 0) || !std::isfinite(v))
      throw CLI::ValidationError(option, "expected three non-negative numbers P0,P1,P2, got '" + text + "'");
    out[k] = v;
    pos = end + 1;
  }
  return out;
}

EngineConfig make_engine_config(const ModelOptions& model, const EngineOptions& engine) {
  EngineConfig c;
  c.threads = resolve_threads(model.threads);
  set_max_num_seqs(c, engine.max_num_seqs, "--max-num-seqs");
  set_max_num_batched_tokens(c, engine.max_num_batched_tokens, "--max-num-batched-tokens");
  c.long_prefill_threshold = engine.long_prefill_threshold;
  c.prefill_cost = engine.prefill_cost == "tokens" ? PrefillCostMode::Tokens
                   : engine.prefill_cost == "shape" ? PrefillCostMode::Shape
                                                    : PrefillCostMode::Fitted;
  c.block_size = model.block_size;
  c.kv_dtype = parse_kv_dtype(model.kv_dtype);
  c.kv_cache_memory = engine.kv_cache_memory;
  c.gpu_memory_utilization = engine.gpu_memory_utilization;
  c.enable_prefix_caching = engine.enable_prefix_caching;
  c.admission = admission_policy_from_name(engine.admission, "--admission");
  c.decode_headroom = engine.decode_headroom;
  c.kv_watermarks = parse_per_class("--kv-watermarks", engine.kv_watermarks);
  c.max_queue_wait = parse_per_class("--max-queue-wait", engine.max_queue_wait);
  c.reject_on_queue_timeout = engine.queue_timeout_action == "reject";
  c.interactive_step_tokens = engine.interactive_step_tokens;
  c.interactive_hold_s = engine.interactive_hold;
  c.memory_guard.enabled = engine.memory_guard == "on";
  c.memory_guard.high_water = engine.memory_guard_high;
  c.memory_guard.low_water = engine.memory_guard_low;
  c.memory_guard.limit_bytes = engine.memory_limit;
  c.sla = {engine.sla_tpot_p99, engine.sla_ttft_p99};
  c.sla_window_s = engine.sla_window;
  if (engine.speculative != "off") c.speculative.method = engine.speculative;
  if (!engine.speculative_model.empty()) {
    if (engine.speculative == "ngram" || engine.speculative == "mtp")
      throw CLI::ValidationError("--speculative-model", "drafts with a model; it does not combine with --speculative " +
                                                            engine.speculative);
    c.speculative.method = "draft_model";
    c.speculative.model = engine.speculative_model;
  } else if (engine.speculative == "draft_model") {
    throw CLI::ValidationError("--speculative", "draft_model needs --speculative-model FILE");
  }
  c.speculative.num_tokens = engine.num_speculative_tokens;
  c.speculative.ngram_min = engine.ngram_min;
  c.speculative.ngram_max = engine.ngram_max;
  c.speculative.adaptive = engine.speculative_adaptive == "on";
  if (engine.ngram_max < engine.ngram_min) throw CLI::ValidationError("--ngram-max", "must be at least --ngram-min");
  check_parallel_options(engine.parallel, engine.runs_split_model);
  return c;
}

}  // namespace db::cli

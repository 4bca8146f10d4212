// The continuous-batching engine: owns the scheduler, the KV cache and the model
// runner, and steps them on its own thread. Thread-safe entry points.
//
//   submit() --> waiting queue --> Scheduler::schedule() --> ModelRunner::execute()
//        ^                                                        |
//        |  OutputCallback (output thread: detokenize, stop strings) <--- Scheduler::update()
//
// Threads: submit()/abort()/stats()/wait_idle() may be called from any thread.
// One step thread runs schedule -> execute -> update and sleeps when idle; one
// output thread detokenizes, matches stop strings and calls the callbacks, so
// neither detokenization nor callbacks ever delay a model step.
//
// n > 1: a request runs as one sequence until its prompt is computed; the step
// that samples its first tokens draws n of them from the same logits (sampler
// streams 0..n-1) and forks it into n sequences sharing the prompt's KV blocks
// copy-on-write. A request of n samples owns the ids [id, id + n).
//
// Stop strings are matched on detokenized text on the output thread; on a match
// the sample ends (finish Stop, stop_reason = the string), text from the match on
// is dropped, and the sequence is stopped at the next step; tokens it sampled in
// between are discarded.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine_types.h"
#include "kvcache/block_pool.h"
#include "memory/memory_guard.h"
#include "model/router_stats.h"
#include "sched/scheduler_config.h"
#include "sched/sla_controller.h"
#include "spec/spec_decode_stats.h"
#include "spec/speculative_config.h"
#include "tensor/dtype.h"

namespace db {

class ModelBundle;

enum class PrefillCostMode { Tokens, Shape, Fitted };

struct EngineConfig {
  int threads = 0;                       // compute threads (0 = all cores)
  int max_num_seqs = 64;                 // running sequences at most
  int max_num_batched_tokens = 2048;     // tokens per step at most
  // For an MoE model, replace max_num_seqs / max_num_batched_tokens at start by the
  // choice of engine/moe_batch_sizing.h (logged to stderr); the command line sets
  // them when the option is not given. Dense models keep the values above.
  bool auto_max_num_seqs = false, auto_max_num_batched_tokens = false;
  // Memory read bandwidth (bytes/s) for that choice when the caller already has
  // it (serve measures it for its roofline gauge); 0 = measured at start.
  double read_bytes_per_s = 0;
  int long_prefill_threshold = 0;        // a prompt chunk longer than this is capped so short ones run too;
                                         // in steps shared with decodes or short prompts, at an eighth of it
                                         // (0 = auto: a quarter of max_num_batched_tokens, in whole blocks)
  // How a capped chunk is priced (sched/prefill_cost.h): Fitted (default) counts
  // each token's attention over the context before it, at the rate measured from
  // step times (starting from the model's MAC counts), so a chunk deep in a long
  // prompt is shorter and the steps beside it stay short; Shape uses the MAC
  // counts only; Tokens counts tokens (every chunk cap-sized). Outputs are the
  // same whichever: only the steps' composition changes.
  PrefillCostMode prefill_cost = PrefillCostMode::Fitted;
  int block_size = 16;                   // KV block size in tokens (16 or 64)
  DType kv_dtype = DType::F16;           // KV cache element type
  int64_t kv_cache_memory = 0;           // bytes for the KV cache (0 = kv_cache_fraction of available memory)
  double kv_cache_fraction = 0.25;       // share of available memory used when kv_cache_memory is 0
  // A model on a device (--device cuda) with kv_cache_memory 0: the KV pool takes what
  // is free of this share of the device's memory once the weights and buffers are in.
  double gpu_memory_utilization = 0.9;
  bool enable_prefix_caching = true;     // reuse cached full blocks of identical prompt prefixes
  // How requests are admitted when KV blocks are short (sched/scheduler.h,
  // "Admission"): Reserve admits a request only when its prompt and its next
  // decode_headroom outputs fit beside what the running sequences still need for
  // theirs, so a pool that holds a few sequences runs a few at a time to the end;
  // FirstChunk admits on the first chunk's blocks (vLLM's rule).
  AdmissionPolicy admission = AdmissionPolicy::Reserve;
  int decode_headroom = 512;             // Reserve: outputs reserved per sequence ahead of its tokens (>= 1)
  // Per priority class c: the share of the KV pool that admitting or growing a
  // class-c sequence must leave free (kept for more urgent classes); non-decreasing.
  std::array<double, 3> kv_watermarks{0.0, 0.05, 0.10};
  // Per class: the longest a request may wait for its first admission, in seconds
  // (0 = no limit). Past it, the request is promoted one class (served ahead) or,
  // with reject_on_queue_timeout, ended with FinishReason::QueueTimeout.
  std::array<double, 3> max_queue_wait{0.0, 0.0, 0.0};
  bool reject_on_queue_timeout = false;
  // In a step that serves an interactive (class 0) sequence, less urgent ones
  // compute at most this many tokens, so interactive steps stay short (0 = no cap).
  int interactive_step_tokens = 16;
  double interactive_hold_s = 1.0;       // ... and for this long after the last interactive work
  MemoryGuardConfig memory_guard;        // the OOM precursor (memory/memory_guard.h)
  // The adaptive batch controller (sched/sla_controller.h), off unless a target is
  // set: it tunes the step's token budget within [32, max_num_batched_tokens] and
  // the running cap within [1, max_num_seqs]; decisions go to stderr.
  SlaTargets sla;
  double sla_window_s = 2.0;             // its control window
  // Speculative decoding (spec/speculative_decoder.h), off unless a method is set:
  // decodes draft tokens that the step verifies; outputs are unchanged.
  SpeculativeConfig speculative;
};

struct EngineStats {
  int64_t running = 0, waiting = 0;           // sequences now (a forked request counts n); waiting counts
                                              // requests submitted since the last step too
  std::array<int64_t, 3> running_by_priority{};  // running sequences of priority class 0, 1, 2
  std::array<int64_t, 3> waiting_by_priority{};  // waiting sequences of priority class 0, 1, 2
  int64_t prompt_tokens = 0;                  // prompt tokens computed (excluding cache hits; recomputation included)
  int64_t cached_prompt_tokens = 0;           // prompt tokens served by the prefix cache
  int64_t generated_tokens = 0;               // tokens sampled
  int64_t preemptions = 0;                    // requests preempted (recompute)
  int64_t finished_sequences = 0;             // sequences ended, whatever the reason (a request of n samples: n)
  int64_t steps = 0;                          // model steps
  double kv_usage = 0;                        // fraction of KV blocks in use
  int64_t num_blocks = 0, free_blocks = 0;    // KV pool size (null block included) and free blocks
  double prefix_cache_hit_rate = 0;           // hit tokens / queried tokens
  // `pool` and `blocks_by_priority` scan the block pool: refreshed when the engine goes
  // idle, and while it is busy only with Engine::set_pool_scans_while_busy(true).
  PoolFragmentation pool;                     // free blocks, largest free run, cached blocks
  int64_t evicted_blocks = 0;                 // cached blocks reused for other tokens so far
  int64_t resident_blocks = 0;                // blocks whose memory has been touched (RSS of the pool)
  std::array<int64_t, 3> blocks_by_priority{};  // blocks held by running sequences of class 0, 1, 2
  int64_t constraint_masks = 0;               // masks of allowed tokens filled for constrained sequences
  double constraint_mask_seconds = 0;         // ... and the seconds that took, summed over threads
  int64_t timeouts = 0, queue_timeouts = 0, promotions = 0;  // deadline aborts, queue-wait rejections, promotions
  MemoryGuardSnapshot memory_guard;           // the guard's state, cap and events
  SlaControllerSnapshot sla;                  // the SLA controller's targets, settings and decisions
  SpecDecodeStats spec;                       // speculative decoding's counters (proposer "" when off)
  RouterStats router;                         // MoE models: tokens routed per layer and expert since the
                                              // model was loaded (all steps of every engine); empty otherwise
};

class Engine {
 public:
  // `bundle` must outlive the engine. Starts the step thread.
  Engine(ModelBundle& bundle, EngineConfig cfg);
  ~Engine();  // aborts what is left and joins the threads
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Validates and queues a request; `on_output` receives its outputs (see
  // OutputCallback). Throws db::Error (nothing queued) for an invalid request:
  // empty prompt, token ids outside the vocabulary, prompt + 1 beyond the context,
  // bad sampling parameters, n outside [1, max_num_seqs], an empty stop string,
  // priority outside [0, 2], a sequence larger than the whole KV cache (see
  // engine/request_validation.h), or a missing callback.
  RequestId submit(EngineRequest req, OutputCallback on_output);
  // Stops a request; its blocks return to the pool at the next step and its
  // callback gets a final output with FinishReason::Abort. Unknown ids are ignored.
  void abort(RequestId id);
  // Blocks until no request is waiting or running and every final output was
  // delivered. Must not be called from an OutputCallback.
  void wait_idle();
  // A copy of the stats published after the last step, requests submitted since
  // counted as waiting. Copying a MoE model's router counts allocates.
  EngineStats stats() const;
  // Whether the stats' block-pool fields (pool, blocks_by_priority) are also
  // refreshed while requests run, at most every 200 ms (a scan of the whole pool);
  // off by default: then they are as of the last time the engine went idle.
  void set_pool_scans_while_busy(bool on);
  const EngineConfig& config() const;
  // Installs (or, with an empty function, removes) the step observer; once this
  // returns, a removed observer is no longer called.
  void set_step_observer(StepObserver observer);
  // One line on the KV pool: layout, dtype, bytes per token, tokens per GiB, blocks.
  const std::string& kv_cache_summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace db

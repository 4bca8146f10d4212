// The step side of the engine: the scheduler, the paged KV store and the model
// runner, stepped by a single thread (not thread-safe). Each step is
// schedule -> execute -> update, and what it means for callers comes out as
// OutputEvents for the output thread.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/output_event.h"
#include "engine/request_validation.h"
#include "engine/sla_loop.h"
#include "kvcache/kv_cache_spec.h"
#include "memory/memory_guard.h"
#include "model/kv_store.h"
#include "model/model.h"
#include "model/weight_read_bytes.h"
#include "runner/model_runner.h"
#include "sched/scheduler.h"
#include "sched/step_cost_fit.h"
#include "spec/speculative_decoder.h"
#include "tokenizer/tokenizer.h"
#include "util/thread_pool.h"

namespace db {

class EngineCore {
 public:
  // Sizes the KV pool from cfg (kv_cache_memory, else kv_cache_fraction of the
  // available memory) and model.kv_cache_shape(). Throws db::Error for an
  // invalid configuration or a budget that holds fewer than 2 blocks.
  // `weights`: what a step reads of them (ModelBundle::weight_read_bytes), for StepRecord::bytes_read.
  EngineCore(Model& model, const Tokenizer& tokenizer, const EngineConfig& cfg, WeightReadBytes weights = {});

  // What submit() checks requests against.
  const RequestLimits& limits() const { return limits_; }
  const SchedulerConfig& scheduler_config() const { return sched_->config(); }

  void add_request(const RequestParams& p) { sched_->add_request(p); }
  // Ends every live sequence of a request; false when none was live.
  bool finish_group(RequestId group, RequestStatus status);
  // Ends one sequence (a stop string matched on the output side).
  void finish_sequence(RequestId id);
  // Ids of the requests with live sequences.
  std::vector<RequestId> live_groups() const;
  bool has_unfinished() const { return sched_->has_unfinished(); }

  // Before a step: ends requests past their deadline or queue-wait limit
  // (Failed events with reason Timeout / QueueTimeout), and applies the memory
  // guard's decision (a new reading at most every poll interval; its messages
  // go to stderr).
  void enforce_limits(std::vector<OutputEvent>& events);
  // Runs one step and appends its events (Scheduled, Tokens, Failed). Returns
  // the step's record; tokens == 0 when it computed nothing.
  StepRecord step(std::vector<OutputEvent>& events);

  EngineStats stats() const {
    EngineStats s;
    read_stats(s, true);
    return s;
  }
  // Overwrites every field of `out`. Its router stats are copy-assigned, so an
  // `out` reused from step to step keeps its buffers: no allocation per step.
  // `scan_pool`: also refresh the fields that scan the block pool and block tables
  // (pool, blocks_by_priority); without it they keep out's values.
  void read_stats(EngineStats& out, bool scan_pool) const;
  // One line on the KV pool (describe_kv_pool), and the draft model's when
  // speculation has one, for start-up logs.
  const std::string& kv_summary() const { return kv_summary_; }

 private:
  // Drops a sequence that ended from the runner, the proposer and the SLA loop, in
  // the step it ended (the next step's finished_ids would report it too late).
  void forget(RequestId id);
  void fail_step(const SchedulerOutput& so, const std::string& error, std::vector<OutputEvent>& events);
  // Hands the fitted prefill cost to the scheduler; logs it when it changed much.
  void update_prefill_cost();

  Model& model_;
  ThreadPool pool_;
  RequestLimits limits_;
  std::unique_ptr<Scheduler> sched_;
  std::unique_ptr<KVStore> kv_;
  std::unique_ptr<ModelRunner> runner_;
  std::string kv_summary_;
  MemoryGuard guard_;
  WeightReadBytes weights_;
  double kv_bytes_per_token_ = 0;
  std::optional<SlaLoop> sla_;
  std::optional<SpeculativeDecoder> spec_;
  std::optional<StepCostFit> cost_fit_;  // refines the scheduler's prefill cost from step times (Fitted mode)
  double prior_prefill_rate_ = 0;        // the model-shape rate the fit started from
  double logged_prefill_rate_ = 0;       // the rate last logged (0 = none yet)
};

// Steady-clock seconds: the clock of request arrival times and deadlines.
double engine_seconds(EngineClock::time_point t);

// The model's KV cache shape in the configured dtype and block size.
KVCacheSpec engine_kv_cache_spec(const Model& model, const EngineConfig& cfg);
// The KV pool size for a configuration: blocks (null block included). With a
// draft model whose cache takes `draft_bytes_per_token`, the budget holds both
// pools with the same number of blocks each.
int32_t engine_num_kv_blocks(const Model& model, const EngineConfig& cfg, size_t draft_bytes_per_token = 0);
// "KV cache: KeyValue, 30 layers x K 192 + V 192, F16, 23040 bytes/token, 46603 tokens/GiB; 182 blocks ..."
std::string describe_kv_pool(const KVCacheSpec& spec, int32_t num_blocks);
// `cfg` with the MoE batch defaults applied (EngineConfig::auto_max_num_seqs and
// auto_max_num_batched_tokens): measures the read bandwidth and the int8 peak on
// cfg.threads threads (about 0.2 s) and logs the choice. Unchanged for a dense model.
EngineConfig with_moe_batch_defaults(const Model& model, const WeightReadBytes& weights, EngineConfig cfg);

}  // namespace db

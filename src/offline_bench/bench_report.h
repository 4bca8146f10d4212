// What one benchmark run measured, the figures derived from it, and their
// rendering as a text table and as JSON.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine_types.h"
#include "offline_bench/latency_summary.h"
#include "offline_bench/pool_report.h"
#include "offline_bench/router_report.h"
#include "offline_bench/spec_report.h"
#include "offline_bench/workload.h"

namespace db::bench {

// How requests are run and what "prefill" and "decode" throughput mean:
//  Mixed:   all requests submitted at once; prefill and decode share engine steps
//           (continuous batching), so prompt and generated tokens/s are each
//           token count / the run's wall time, not speeds of separate phases.
//  Prefill: as Mixed with max_tokens = 1: the run is prompt processing (plus one
//           sampled token per request); prompt tokens/s is the prefill speed.
//  Decode:  requests run in waves of max_num_seqs; decode tokens/s counts only the
//           tokens sampled after every prompt of the wave was computed, over
//           those windows (the speed of decoding a batch of max_num_seqs).
enum class Phase { Mixed, Prefill, Decode };
const char* phase_name(Phase p);                       // "mixed", "prefill", "decode"
Phase parse_phase(const std::string& text);            // throws db::Error for other names

// One request's outcome as the bench saw it.
struct RequestRecord {
  RequestStats stats;                      // the engine's final stats of the request
  FinishReason finish = FinishReason::None;
};

// Raw observations of one measured run.
struct RunMeasurements {
  int max_num_seqs = 0;                 // engine setting of this run
  Phase phase = Phase::Mixed;
  double wall_seconds = 0;              // first submit -> last final output
  std::vector<RequestRecord> requests;  // in submission order
  int64_t computed_prompt_tokens = 0;   // engine counter over the run (recomputation after preemption included)
  int64_t preemptions = 0;              // engine counter over the run
  int64_t steps = 0;                    // engine counter over the run
  double peak_kv_usage = 0;             // largest sampled fraction of KV blocks in use
  double mean_kv_usage = 0;             // time-weighted mean of the sampled fractions
  int64_t kv_samples = 0;               // engine stats samples taken
  double decode_window_seconds = 0;     // Decode phase: time after each wave's prompts were all computed
  int64_t decode_window_tokens = 0;     // Decode phase: tokens sampled in those windows
  RouterStats router;                   // MoE models: tokens routed over the run; empty otherwise
  SpecReport spec;                      // speculative decoding over the run (empty when off)
  PoolReport pool;                      // the KV pool at the end of the run (evictions: during it)
};

// Figures of one run (see Phase for the throughput definitions).
struct RunReport {
  int max_num_seqs = 0;
  Phase phase = Phase::Mixed;
  int64_t requests = 0;                  // requests run
  int64_t failed_requests = 0;           // requests that ended in an error or abort
  int64_t prompt_tokens = 0;             // sum of prompt lengths
  int64_t cached_prompt_tokens = 0;      // prompt tokens served by the prefix cache
  int64_t computed_prompt_tokens = 0;    // prompt tokens the model computed
  int64_t generated_tokens = 0;          // tokens sampled
  double wall_seconds = 0;
  double requests_per_s = 0;             // requests / wall
  double prompt_tokens_per_s = 0;        // computed prompt tokens / wall
  double generated_tokens_per_s = 0;     // generated tokens / wall
  double total_tokens_per_s = 0;         // (computed prompt + generated tokens) / wall
  double decode_tokens_per_s = 0;        // Decode phase only (0 otherwise): decode-window tokens / window time
  LatencySummary ttft;                   // seconds, submit -> first token
  LatencySummary tpot;                   // seconds, (e2e - ttft) / (generated - 1) of requests with > 1 token
  LatencySummary e2e;                    // seconds, submit -> finished
  double peak_kv_usage = 0, mean_kv_usage = 0;
  double prefix_cache_hit_rate = 0;      // cached / prompt tokens
  int64_t preemptions = 0, steps = 0;
  RouterReport router;                   // MoE models only (empty otherwise)
  SpecReport spec;                       // speculative decoding only (empty otherwise)
  PoolReport pool;                       // the KV pool at the end of the run (evictions: during it)
};

RunReport make_run_report(const RunMeasurements& m);

nlohmann::json to_json(const LatencySummary& s);
nlohmann::json to_json(const RunReport& r);
nlohmann::json to_json(const WorkloadSpec& w);
// Definitions of the reported figures, for the JSON report.
nlohmann::json metric_definitions();
// The whole JSON report: {"settings": settings, "workload", "definitions", "runs": [...]}.
nlohmann::json bench_json(const nlohmann::json& settings, const WorkloadSpec& workload,
                          const std::vector<RunReport>& runs);

// Human-readable tables (throughput, then latency and cache), one row per run.
std::string format_table(const std::vector<RunReport>& runs);
// The router summary of the runs with one (MoE models), one row per run; "" when none has.
std::string format_router_table(const std::vector<RunReport>& runs);
// Speculative decoding of the runs with it, one row per run; "" when none has.
std::string format_spec_table(const std::vector<RunReport>& runs);
// The KV pool at the end of each run (free blocks, largest free run, cached blocks,
// evictions), one row per run.
std::string format_pool_table(const std::vector<RunReport>& runs);

}  // namespace db::bench

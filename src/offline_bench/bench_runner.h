// Runs a benchmark workload through a fresh Engine and records what it measured.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "offline_bench/bench_report.h"
#include "offline_bench/workload.h"

namespace db {
class ModelBundle;
class Tokenizer;
}  // namespace db

namespace db::bench {

struct RunConfig {
  EngineConfig engine;                 // the engine of this run (one per run)
  Phase phase = Phase::Mixed;          // how requests are run (see Phase)
  std::vector<BenchRequest> warmup;    // run to completion on the same engine first, not measured
  double sample_interval_s = 0.002;    // how often engine stats (KV usage) are sampled
};

// Token ids prompts may be drawn from: every Normal (non-special, non-added,
// used) id of the vocabulary.
std::vector<int32_t> prompt_token_pool(const Tokenizer& tokenizer);

// Greedy, EOS-ignoring engine requests for `workload` (max_tokens = 1 in Phase::Prefill).
std::vector<EngineRequest> to_engine_requests(const std::vector<BenchRequest>& workload, Phase phase);

// Creates an engine from `cfg.engine`, runs the warm-up, then runs `workload` as
// cfg.phase says and returns the measurements (engine counters are deltas over
// the measured part). Throws db::Error when the engine rejects a request.
RunMeasurements run_workload(ModelBundle& bundle, const RunConfig& cfg, const std::vector<BenchRequest>& workload);

}  // namespace db::bench

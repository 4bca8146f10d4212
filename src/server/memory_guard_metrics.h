// The memory guard's Prometheus metrics (memory/memory_guard.h), refreshed from
// EngineStats::memory_guard at scrape time: its state (one 0/1 gauge per state
// name, so a dashboard can plot time spent in each), the running cap it imposes,
// whether admission is paused and KV growth frozen, the memory readings it acts
// on, and its back-off and recovery totals. Thread-safe.
#pragma once
#include <string>

#include "memory/memory_guard.h"
#include "metrics/registry.h"

namespace db::server {

class MemoryGuardMetrics {
 public:
  explicit MemoryGuardMetrics(std::string model_name);

  // The exposition text of the guard metrics for `s`.
  std::string render(const MemoryGuardSnapshot& s);

 private:
  std::string model_;
  metrics::Registry reg_;
  metrics::Family<metrics::Gauge>& state_;  // labels: model_name, state
  metrics::Gauge &enabled_, &max_running_, &admission_paused_, &kv_growth_frozen_;
  metrics::Gauge &usage_, &limit_, &rss_;
  metrics::Counter &backoffs_, &recoveries_;
};

}  // namespace db::server

// The KV block pool's diagnostics as Prometheus metrics, refreshed from
// EngineStats at scrape time: how fragmented the free memory is (largest run of
// consecutive free blocks), how much of it still holds reusable prefix-cache
// blocks, how many blocks have resident memory, cache evictions, and the blocks
// each priority class holds. Thread-safe.
#pragma once
#include <string>

#include "engine/engine.h"
#include "metrics/registry.h"

namespace db::server {

class KvPoolMetrics {
 public:
  explicit KvPoolMetrics(std::string model_name);

  // The exposition text of the pool metrics for `s`.
  std::string render(const EngineStats& s);

 private:
  std::string model_;
  metrics::Registry reg_;
  metrics::Gauge &usable_, &largest_free_run_, &cached_, &resident_;
  metrics::Counter& evicted_;
  metrics::Family<metrics::Gauge>& by_priority_;  // labels: model_name, priority
};

}  // namespace db::server

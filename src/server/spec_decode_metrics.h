// Speculative decoding's Prometheus metrics, refreshed from EngineStats::spec at
// scrape time (labels model_name and proposer): drafts, draft tokens, accepted
// tokens (also per draft position) and emitted tokens as counters, under vLLM's
// spec_decode names where vLLM has them; acceptance rate, mean accepted length
// and the governor's latest cost ratio as gauges. Nothing is exported while
// speculation is off. Thread-safe.
#pragma once
#include <string>

#include "metrics/registry.h"
#include "server/metric_names.h"
#include "spec/spec_decode_stats.h"

namespace db::server {

class SpecDecodeMetrics {
 public:
  SpecDecodeMetrics(std::string model_name, MetricNaming naming);
  std::string render(const SpecDecodeStats& s);

 private:
  std::string model_;
  metrics::Registry reg_;
  metrics::Family<metrics::Counter>&drafts_, &draft_tokens_, &accepted_, &emitted_, &paused_;
  metrics::Family<metrics::Counter>& accepted_per_pos_;  // + label position
  metrics::Family<metrics::Gauge>&acceptance_rate_, &mean_length_, &cost_ratio_;
};

}  // namespace db::server

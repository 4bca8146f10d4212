// The SLA controller's Prometheus metrics (sched/sla_controller.h), refreshed from
// EngineStats::sla at scrape time: whether it is on, its targets, the latest
// window's estimates, the settings it chose and its decisions by action. Only
// the on/off gauge is exported while it is off. Thread-safe.
#pragma once
#include <string>

#include "metrics/registry.h"
#include "sched/sla_controller.h"

namespace db::server {

class SlaMetrics {
 public:
  explicit SlaMetrics(std::string model_name);
  std::string render(const SlaControllerSnapshot& s);

 private:
  std::string model_;
  metrics::Registry on_reg_, reg_;
  metrics::Gauge& enabled_;
  metrics::Family<metrics::Gauge>&target_, &observed_;  // labels: model_name, metric
  metrics::Gauge &step_tokens_, &max_running_, &tokens_per_s_;
  metrics::Family<metrics::Counter>& decisions_;  // labels: model_name, action
};

}  // namespace db::server

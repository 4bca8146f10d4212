// The roofline gauge: bytes of weights and KV a decode step reads
// (StepRecord::bytes_read) over the step's time, against the machine's read
// bandwidth (measured once at start-up or given by --memory-bandwidth). Decode
// steps are those without prompt tokens: they are bound by memory, so the
// fraction says how close a step runs to the machine's limit. Thread-safe.
#pragma once
#include <string>

#include "engine/engine_types.h"
#include "metrics/registry.h"

namespace db::server {

class RooflineMetrics {
 public:
  // `machine_bytes_per_s`: the machine's read bandwidth (0 = unknown: no fraction).
  RooflineMetrics(std::string model_name, double machine_bytes_per_s);

  // Called for every step; decode steps update the gauges (an exponential
  // average over about 16 steps, so one slow step does not swing them).
  void on_step(const StepRecord& step);
  std::string render() const { return reg_.render(); }

 private:
  std::string model_;
  double machine_ = 0;
  double avg_ = 0;  // bytes/s; touched only by on_step (one thread)
  metrics::Registry reg_;
  metrics::Gauge &machine_gauge_, &achieved_, &fraction_, &step_bytes_;
};

}  // namespace db::server

// The server's Prometheus metrics (vLLM's names with the `deepbatch:` prefix, and
// with --metrics-names also or only under vLLM's own names, see
// server/metric_names.h):
// request outcomes and latencies observed as requests finish, engine gauges and
// totals read from Engine::stats() at scrape time, HTTP responses by status;
// the KV pool's diagnostics (server/kv_pool_metrics.h) and the memory guard's
// (server/memory_guard_metrics.h); for MoE models also the router's
// (server/router_metrics.h); the SLA controller's (server/sla_metrics.h), speculative
// decoding's (server/spec_decode_metrics.h) and the
// roofline gauge (server/roofline_metrics.h). Thread-safe.
#pragma once
#include <string>

#include "engine/engine.h"
#include "metrics/registry.h"
#include "server/kv_pool_metrics.h"
#include "server/memory_guard_metrics.h"
#include "server/metric_names.h"
#include "server/roofline_metrics.h"
#include "server/router_metrics.h"
#include "server/sla_metrics.h"
#include "server/spec_decode_metrics.h"

namespace db::server {

class ServerMetrics {
 public:
  // `machine_read_bytes_per_s`: the roofline gauge's reference (0 = unknown).
  explicit ServerMetrics(std::string model_name, MetricNaming naming = MetricNaming::Deepbatch,
                         double machine_read_bytes_per_s = 0);

  // One HTTP response started with `status`.
  void on_http_response(int status);
  // One sample (choice) finished with `reason`.
  void on_sample_finished(FinishReason reason);
  // One engine request's final output (`samples` = its n): queue time, TTFT, end-to-end latency, time per output
  // token, prompt and generated tokens.
  void on_request_finished(const RequestStats& stats, int samples);
  // `tokens` new tokens of one sample arrived `seconds` after its previous ones.
  void on_tokens(double seconds, size_t tokens);
  // One engine step: its duration, tokens and sequences (Engine::set_step_observer).
  void on_step(const StepRecord& step);
  // Refreshes the engine gauges and totals from `s`, then renders every metric.
  std::string render(const EngineStats& s);

 private:
  // The names of the measurement `deepbatch_name` under naming_.
  metrics::Names names(const std::string& deepbatch_name) const;

  std::string model_;
  MetricNaming naming_;
  metrics::Registry reg_;
  metrics::Family<metrics::Counter>& http_requests_;
  metrics::Family<metrics::Counter>& success_;
  metrics::Counter &prompt_tokens_, &generation_tokens_, &prefix_queries_, &prefix_hits_, &preemptions_;
  metrics::Counter &timeouts_, &queue_timeouts_, &promotions_;
  metrics::Gauge &running_, &waiting_, &preemptions_per_finished_;
  metrics::Family<metrics::Gauge>&running_by_priority_, &waiting_by_priority_;  // labels: model_name, priority
  metrics::Gauge &kv_usage_, &kv_free_blocks_, &kv_total_blocks_;
  metrics::Histogram &ttft_, &itl_, &tpot_, &e2e_, &queue_, &request_prompt_tokens_, &request_generation_tokens_;
  metrics::Histogram &step_seconds_, &step_tokens_, &step_sequences_;
  KvPoolMetrics pool_;
  MemoryGuardMetrics guard_;
  RouterMetrics router_;
  SlaMetrics sla_;
  SpecDecodeMetrics spec_;
  RooflineMetrics roofline_;
};

}  // namespace db::server

#include "server/memory_guard_metrics.h"

#include "server/metric_names.h"

namespace db::server {

MemoryGuardMetrics::MemoryGuardMetrics(std::string model_name)
    : model_(std::move(model_name)),
      state_(reg_.gauge("deepbatch:memory_guard_state",
                        "1 for the memory guard's current state (normal, shrinking, recovering), 0 for the others.",
                        {"model_name", "state"})),
      enabled_(reg_.gauge("deepbatch:memory_guard_enabled", "1 when the memory guard is on.", kModelLabel).labels({model_})),
      max_running_(reg_.gauge("deepbatch:memory_guard_max_running",
                              "Running sequences the memory guard allows (the configured maximum when unconstrained).",
                              kModelLabel)
                       .labels({model_})),
      admission_paused_(reg_.gauge("deepbatch:memory_guard_admission_paused",
                                   "1 while the memory guard holds waiting sequences back.", kModelLabel)
                            .labels({model_})),
      kv_growth_frozen_(reg_.gauge("deepbatch:memory_guard_kv_growth_frozen",
                                   "1 while the KV cache may only reuse blocks whose memory is already resident.",
                                   kModelLabel)
                            .labels({model_})),
      usage_(reg_.gauge("deepbatch:memory_guard_usage_bytes",
                        "Memory the guard weighs against the limit: the binding cgroup's working set, else the RSS.",
                        kModelLabel)
                 .labels({model_})),
      limit_(reg_.gauge("deepbatch:memory_guard_limit_bytes",
                        "The memory limit the guard enforces (configured, else the binding cgroup's; 0 = none).",
                        kModelLabel)
                 .labels({model_})),
      rss_(reg_.gauge("deepbatch:memory_guard_rss_bytes", "The process's resident set at the guard's last reading.",
                      kModelLabel)
               .labels({model_})),
      backoffs_(reg_.counter("deepbatch:memory_guard_backoffs_total",
                             "Times the memory guard cut the running cap (multiplicative back-off).", kModelLabel)
                    .labels({model_})),
      recoveries_(reg_.counter("deepbatch:memory_guard_recoveries_total",
                               "Times the memory guard returned to normal after backing off.", kModelLabel)
                      .labels({model_})) {}

std::string MemoryGuardMetrics::render(const MemoryGuardSnapshot& s) {
  for (MemoryGuardState st : {MemoryGuardState::Normal, MemoryGuardState::Shrinking, MemoryGuardState::Recovering})
    state_.labels({model_, memory_guard_state_name(st)}).set(s.state == st ? 1 : 0);
  enabled_.set(s.enabled ? 1 : 0);
  max_running_.set(static_cast<double>(s.max_running));
  admission_paused_.set(s.admission_paused ? 1 : 0);
  kv_growth_frozen_.set(s.kv_growth_frozen ? 1 : 0);
  usage_.set(static_cast<double>(s.usage_bytes));
  limit_.set(static_cast<double>(s.limit_bytes));
  rss_.set(static_cast<double>(s.rss_bytes));
  backoffs_.raise_to(static_cast<double>(s.backoffs));
  recoveries_.raise_to(static_cast<double>(s.recoveries));
  return reg_.render();
}

}  // namespace db::server

// Which names the server's metrics are exported under. Every measurement has a
// `deepbatch:` name; those vLLM also publishes have a `vllm:` name as well (the
// table in metric_names.cpp), so dashboards and autoscalers written for vLLM can
// read a deepbatch server. Both names of a measurement carry the same values and
// labels (model_name, plus finished_reason where vLLM has it).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/registry.h"

namespace db::server {

// The label every server measurement carries: the served model's name.
inline const std::vector<std::string> kModelLabel = {"model_name"};

enum class MetricNaming {
  Deepbatch,  // deepbatch: names only
  Vllm,       // vLLM's name where vLLM has the measurement, else the deepbatch: name
  Both,       // deepbatch: names, plus vLLM's names where vLLM has the measurement
};

// "deepbatch", "vllm", "both".
const char* metric_naming_name(MetricNaming n);
// The inverse of metric_naming_name; nullopt for anything else.
std::optional<MetricNaming> parse_metric_naming(std::string_view s);

// vLLM's name for the measurement named `deepbatch_name`, or nullopt when vLLM has none.
std::optional<std::string> vllm_metric_name(std::string_view deepbatch_name);

// The names the measurement `deepbatch_name` is exported under with `naming`.
metrics::Names exported_names(const std::string& deepbatch_name, MetricNaming naming);

// The deepbatch: names that have a vLLM name (the table's rows, in its order).
std::vector<std::string> metrics_with_vllm_names();

}  // namespace db::server

#include "server/metric_names.h"

#include <array>
#include <utility>

namespace db::server {

namespace {

// Each measurement vLLM also publishes: its deepbatch: name and vLLM's name. The
// values are the same measurement; where the definitions differ slightly the
// deepbatch: metric's help says how (prompt tokens exclude prefix-cache hits;
// finished requests are counted per sample, as vLLM counts each of n's children).
constexpr std::array<std::pair<std::string_view, std::string_view>, 21> kVllmNames = {{
    {"deepbatch:num_requests_running", "vllm:num_requests_running"},
    {"deepbatch:num_requests_waiting", "vllm:num_requests_waiting"},
    {"deepbatch:kv_cache_usage_perc", "vllm:kv_cache_usage_perc"},
    {"deepbatch:prompt_tokens_total", "vllm:prompt_tokens_total"},
    {"deepbatch:generation_tokens_total", "vllm:generation_tokens_total"},
    {"deepbatch:num_preemptions_total", "vllm:num_preemptions_total"},
    {"deepbatch:prefix_cache_queries_total", "vllm:prefix_cache_queries_total"},
    {"deepbatch:prefix_cache_hits_total", "vllm:prefix_cache_hits_total"},
    {"deepbatch:request_success_total", "vllm:request_success_total"},
    {"deepbatch:time_to_first_token_seconds", "vllm:time_to_first_token_seconds"},
    {"deepbatch:inter_token_latency_seconds", "vllm:inter_token_latency_seconds"},
    {"deepbatch:time_per_output_token_seconds", "vllm:time_per_output_token_seconds"},
    {"deepbatch:e2e_request_latency_seconds", "vllm:e2e_request_latency_seconds"},
    {"deepbatch:request_queue_time_seconds", "vllm:request_queue_time_seconds"},
    {"deepbatch:request_prompt_tokens", "vllm:request_prompt_tokens"},
    {"deepbatch:request_generation_tokens", "vllm:request_generation_tokens"},
    {"deepbatch:iteration_tokens_total", "vllm:iteration_tokens_total"},
    {"deepbatch:spec_decode_num_drafts_total", "vllm:spec_decode_num_drafts_total"},
    {"deepbatch:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_draft_tokens_total"},
    {"deepbatch:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens_total"},
    {"deepbatch:spec_decode_num_accepted_tokens_per_pos_total", "vllm:spec_decode_num_accepted_tokens_per_pos_total"},
}};

}  // namespace

const char* metric_naming_name(MetricNaming n) {
  switch (n) {
    case MetricNaming::Deepbatch: return "deepbatch";
    case MetricNaming::Vllm: return "vllm";
    case MetricNaming::Both: return "both";
  }
  return "";
}

std::optional<MetricNaming> parse_metric_naming(std::string_view s) {
  for (MetricNaming n : {MetricNaming::Deepbatch, MetricNaming::Vllm, MetricNaming::Both})
    if (s == metric_naming_name(n)) return n;
  return std::nullopt;
}

std::optional<std::string> vllm_metric_name(std::string_view deepbatch_name) {
  for (const auto& [ours, theirs] : kVllmNames)
    if (ours == deepbatch_name) return std::string(theirs);
  return std::nullopt;
}

metrics::Names exported_names(const std::string& deepbatch_name, MetricNaming naming) {
  const std::optional<std::string> vllm = vllm_metric_name(deepbatch_name);
  if (!vllm || naming == MetricNaming::Deepbatch) return deepbatch_name;
  if (naming == MetricNaming::Vllm) return *vllm;
  return std::vector<std::string>{deepbatch_name, *vllm};
}

std::vector<std::string> metrics_with_vllm_names() {
  std::vector<std::string> out;
  for (const auto& row : kVllmNames) out.emplace_back(row.first);
  return out;
}

}  // namespace db::server

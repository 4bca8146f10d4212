#include "server/metric_names.h"

#include <gtest/gtest.h>

#include <string>

#include "server/server_metrics.h"

namespace db::server {
namespace {

bool has_text(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MetricNames, ParsesEachNamingByItsName) {
  for (MetricNaming n : {MetricNaming::Deepbatch, MetricNaming::Vllm, MetricNaming::Both})
    EXPECT_EQ(parse_metric_naming(metric_naming_name(n)), n);
  EXPECT_FALSE(parse_metric_naming("VLLM").has_value());
  EXPECT_FALSE(parse_metric_naming("").has_value());
}

TEST(MetricNames, MapsMeasurementsVllmHasAndKeepsTheRest) {
  EXPECT_EQ(vllm_metric_name("deepbatch:kv_cache_usage_perc"), "vllm:kv_cache_usage_perc");
  EXPECT_EQ(vllm_metric_name("deepbatch:time_to_first_token_seconds"), "vllm:time_to_first_token_seconds");
  EXPECT_FALSE(vllm_metric_name("deepbatch:memory_guard_state").has_value());
  const std::string ours = "deepbatch:num_requests_running";
  EXPECT_EQ(exported_names(ours, MetricNaming::Deepbatch).list, std::vector<std::string>{ours});
  EXPECT_EQ(exported_names(ours, MetricNaming::Vllm).list, std::vector<std::string>{"vllm:num_requests_running"});
  EXPECT_EQ(exported_names(ours, MetricNaming::Both).list,
            (std::vector<std::string>{ours, "vllm:num_requests_running"}));
  const std::string only_ours = "deepbatch:kv_cache_free_blocks";
  for (MetricNaming n : {MetricNaming::Deepbatch, MetricNaming::Vllm, MetricNaming::Both})
    EXPECT_EQ(exported_names(only_ours, n).list, std::vector<std::string>{only_ours});
}

// Every row of the table names a measurement the server registers: with both
// namings each appears under both names with the same samples; with one naming
// only that name appears.
TEST(MetricNames, EveryMappedMeasurementIsExportedUnderTheChosenNames) {
  RequestStats rs;
  rs.prompt_tokens = 7;
  rs.generated_tokens = 3;
  rs.ttft_seconds = 0.1;
  rs.e2e_seconds = 0.3;
  EngineStats es;
  es.prompt_tokens = 5;
  es.cached_prompt_tokens = 2;
  es.kv_usage = 0.25;
  es.spec.proposer = "ngram";  // speculative decoding's metrics appear only while it is on
  es.spec.accepted_per_position = {0, 0};
  const auto render = [&](MetricNaming n) {
    ServerMetrics m("tiny", n);
    m.on_sample_finished(FinishReason::Stop);
    m.on_request_finished(rs, 1);
    m.on_tokens(0.2, 2);
    return m.render(es);
  };
  const std::string both = render(MetricNaming::Both), ours = render(MetricNaming::Deepbatch),
                    theirs = render(MetricNaming::Vllm);
  for (const std::string& name : metrics_with_vllm_names()) {
    const std::string vllm = *vllm_metric_name(name);
    EXPECT_TRUE(has_text(both, "# TYPE " + name + " ")) << name;
    EXPECT_TRUE(has_text(both, "# TYPE " + vllm + " ")) << vllm;
    EXPECT_TRUE(has_text(ours, "# TYPE " + name + " ")) << name;
    EXPECT_FALSE(has_text(ours, "# TYPE " + vllm + " ")) << vllm;
    EXPECT_TRUE(has_text(theirs, "# TYPE " + vllm + " ")) << vllm;
    EXPECT_FALSE(has_text(theirs, "# TYPE " + name + " ")) << name;
  }
  EXPECT_FALSE(has_text(ours, "vllm:"));
  EXPECT_TRUE(has_text(theirs, "deepbatch:memory_guard_state{"));  // no vLLM name: kept
  const std::string ml = "{model_name=\"tiny\"}";
  EXPECT_TRUE(has_text(both, "vllm:kv_cache_usage_perc" + ml + " 0.25\n"));
  EXPECT_TRUE(has_text(both, "deepbatch:kv_cache_usage_perc" + ml + " 0.25\n"));
  EXPECT_TRUE(has_text(both, "vllm:prefix_cache_queries_total" + ml + " 7\n"));
  EXPECT_TRUE(has_text(both, "vllm:request_success_total{model_name=\"tiny\",finished_reason=\"stop\"} 1\n"));
  EXPECT_TRUE(has_text(both, "vllm:request_prompt_tokens_sum" + ml + " 7\n"));
  EXPECT_TRUE(has_text(both, "vllm:request_generation_tokens_bucket{model_name=\"tiny\",le=\"5\"} 1\n"));
  EXPECT_TRUE(has_text(both, "vllm:inter_token_latency_seconds_count" + ml + " 2\n"));
}

}  // namespace
}  // namespace db::server

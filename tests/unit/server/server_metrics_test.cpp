#include "server/server_metrics.h"

#include <gtest/gtest.h>

#include <vector>

namespace db::server {
namespace {

bool contains(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST(ServerMetrics, ExposesEngineStatsAndObservations) {
  ServerMetrics m("tiny");
  m.on_http_response(200);
  m.on_http_response(200);
  m.on_http_response(429);
  m.on_sample_finished(FinishReason::Stop);
  m.on_sample_finished(FinishReason::Length);
  m.on_sample_finished(FinishReason::None);  // not a finish: ignored
  RequestStats rs;
  rs.generated_tokens = 11;
  rs.ttft_seconds = 0.5;
  rs.e2e_seconds = 1.5;
  rs.queue_seconds = 0.01;
  m.on_request_finished(rs, 1);
  m.on_tokens(0.2, 2);
  EngineStats es;
  es.running = 3;
  es.waiting = 4;
  es.running_by_priority = {1, 2, 0};
  es.waiting_by_priority = {0, 1, 3};
  es.prompt_tokens = 100;
  es.cached_prompt_tokens = 28;
  es.generated_tokens = 50;
  es.preemptions = 2;
  es.finished_sequences = 8;
  es.kv_usage = 0.5;
  es.num_blocks = 10;
  es.free_blocks = 5;
  const std::string text = m.render(es);
  const std::string ml = "{model_name=\"tiny\"}";
  EXPECT_TRUE(contains(text, "deepbatch:http_requests_total{code=\"200\"} 2\n")) << text;
  EXPECT_TRUE(contains(text, "deepbatch:http_requests_total{code=\"429\"} 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:request_success_total{model_name=\"tiny\",finished_reason=\"stop\"} 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:num_requests_running" + ml + " 3\n"));
  EXPECT_TRUE(contains(text, "deepbatch:num_requests_waiting" + ml + " 4\n"));
  EXPECT_TRUE(contains(text, "deepbatch:num_requests_running_by_priority{model_name=\"tiny\",priority=\"1\"} 2\n"));
  EXPECT_TRUE(contains(text, "deepbatch:num_requests_waiting_by_priority{model_name=\"tiny\",priority=\"2\"} 3\n"));
  EXPECT_TRUE(contains(text, "deepbatch:num_requests_waiting_by_priority{model_name=\"tiny\",priority=\"0\"} 0\n"));
  EXPECT_TRUE(contains(text, "deepbatch:prompt_tokens_total" + ml + " 100\n"));
  EXPECT_TRUE(contains(text, "deepbatch:generation_tokens_total" + ml + " 50\n"));
  EXPECT_TRUE(contains(text, "deepbatch:prefix_cache_queries_total" + ml + " 128\n"));
  EXPECT_TRUE(contains(text, "deepbatch:prefix_cache_hits_total" + ml + " 28\n"));
  EXPECT_TRUE(contains(text, "deepbatch:num_preemptions_total" + ml + " 2\n"));
  EXPECT_TRUE(contains(text, "deepbatch:preemptions_per_finished_request" + ml + " 0.25\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_usage_perc" + ml + " 0.5\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_free_blocks" + ml + " 5\n"));
  EXPECT_TRUE(contains(text, "deepbatch:time_to_first_token_seconds_count" + ml + " 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:time_per_output_token_seconds_sum" + ml + " 0.1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:inter_token_latency_seconds_count" + ml + " 2\n"));
  EXPECT_TRUE(contains(text, "deepbatch:e2e_request_latency_seconds_count" + ml + " 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:request_queue_time_seconds_count" + ml + " 1\n"));
  EXPECT_TRUE(contains(text, "# TYPE deepbatch:time_to_first_token_seconds histogram\n"));
}

TEST(ServerMetrics, ExposesStepTimeAndSize) {
  ServerMetrics m("tiny", MetricNaming::Both);
  m.on_step({0.03, 70, 5});
  m.on_step({0.002, 1, 1});
  const std::string text = m.render(EngineStats{});
  const std::string ml = "{model_name=\"tiny\"";
  EXPECT_NE(text.find("deepbatch:step_duration_seconds_count" + ml + "} 2"), std::string::npos) << text;
  EXPECT_NE(text.find("deepbatch:step_duration_seconds_bucket" + ml + ",le=\"0.0025\"} 1"), std::string::npos);
  EXPECT_NE(text.find("deepbatch:iteration_tokens_total_sum" + ml + "} 71"), std::string::npos);
  EXPECT_NE(text.find("deepbatch:iteration_tokens_total_bucket" + ml + ",le=\"64\"} 1"), std::string::npos);
  EXPECT_NE(text.find("deepbatch:iteration_tokens_total_bucket" + ml + ",le=\"128\"} 2"), std::string::npos);
  EXPECT_NE(text.find("deepbatch:step_sequences_sum" + ml + "} 6"), std::string::npos);
  EXPECT_NE(text.find("vllm:iteration_tokens_total_sum" + ml + "} 71"), std::string::npos);
}

TEST(ServerMetrics, ExposesPoolDiagnosticsAndSchedulingCounters) {
  ServerMetrics m("tiny");
  EngineStats es;
  es.free_blocks = 40;
  es.pool.num_usable_blocks = 99;
  es.pool.num_free_blocks = 40;
  es.pool.largest_free_run = 17;
  es.pool.num_cached_blocks = 12;
  es.resident_blocks = 70;
  es.evicted_blocks = 9;
  es.blocks_by_priority = {5, 30, 24};
  es.timeouts = 3;
  es.queue_timeouts = 2;
  es.promotions = 6;
  const std::string text = m.render(es);
  const std::string ml = "{model_name=\"tiny\"}";
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_free_blocks" + ml + " 40\n")) << text;
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_usable_blocks" + ml + " 99\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_largest_free_run_blocks" + ml + " 17\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_cached_blocks" + ml + " 12\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_resident_blocks" + ml + " 70\n"));
  EXPECT_TRUE(contains(text, "# TYPE deepbatch:kv_cache_evicted_blocks_total counter\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_evicted_blocks_total" + ml + " 9\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_blocks_by_priority{model_name=\"tiny\",priority=\"0\"} 5\n"));
  EXPECT_TRUE(contains(text, "deepbatch:kv_cache_blocks_by_priority{model_name=\"tiny\",priority=\"2\"} 24\n"));
  EXPECT_TRUE(contains(text, "# TYPE deepbatch:request_timeouts_total counter\n"));
  EXPECT_TRUE(contains(text, "deepbatch:request_timeouts_total" + ml + " 3\n"));
  EXPECT_TRUE(contains(text, "deepbatch:request_queue_timeouts_total" + ml + " 2\n"));
  EXPECT_TRUE(contains(text, "deepbatch:request_promotions_total" + ml + " 6\n"));
}

TEST(ServerMetrics, ExposesTheMemoryGuard) {
  ServerMetrics m("tiny");
  EngineStats es;
  es.memory_guard.enabled = true;
  es.memory_guard.state = MemoryGuardState::Shrinking;
  es.memory_guard.max_running = 16;
  es.memory_guard.admission_paused = true;
  es.memory_guard.kv_growth_frozen = true;
  es.memory_guard.usage_bytes = 450 << 20;
  es.memory_guard.limit_bytes = 500 << 20;
  es.memory_guard.rss_bytes = 300 << 20;
  es.memory_guard.backoffs = 2;
  es.memory_guard.recoveries = 1;
  std::string text = m.render(es);
  const std::string ml = "{model_name=\"tiny\"}";
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_enabled" + ml + " 1\n")) << text;
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_state{model_name=\"tiny\",state=\"shrinking\"} 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_state{model_name=\"tiny\",state=\"normal\"} 0\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_state{model_name=\"tiny\",state=\"recovering\"} 0\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_max_running" + ml + " 16\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_admission_paused" + ml + " 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_kv_growth_frozen" + ml + " 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_usage_bytes" + ml + " " + std::to_string(450 << 20) + "\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_limit_bytes" + ml + " " + std::to_string(500 << 20) + "\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_rss_bytes" + ml + " " + std::to_string(300 << 20) + "\n"));
  EXPECT_TRUE(contains(text, "# TYPE deepbatch:memory_guard_backoffs_total counter\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_backoffs_total" + ml + " 2\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_recoveries_total" + ml + " 1\n"));

  es.memory_guard.state = MemoryGuardState::Normal;  // the state gauges follow
  es.memory_guard.admission_paused = false;
  text = m.render(es);
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_state{model_name=\"tiny\",state=\"shrinking\"} 0\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_state{model_name=\"tiny\",state=\"normal\"} 1\n"));
  EXPECT_TRUE(contains(text, "deepbatch:memory_guard_admission_paused" + ml + " 0\n"));
}

TEST(ServerMetrics, EngineTotalsNeverGoBackwards) {
  ServerMetrics m("tiny");
  EngineStats es;
  es.generated_tokens = 10;
  m.render(es);
  es.generated_tokens = 3;
  EXPECT_NE(m.render(es).find("deepbatch:generation_tokens_total{model_name=\"tiny\"} 10\n"), std::string::npos);
}

TEST(ServerMetrics, MoeRouterCountsAndImbalance) {
  ServerMetrics m("moe");
  EngineStats es;
  es.router = RouterStats(3, 1, 4);  // layer 0 dense
  es.router.record(1, std::vector<int64_t>{3, 1, 1, 1});  // imbalance 2
  es.router.record(2, std::vector<int64_t>{2, 2, 2, 0});  // 4/3
  es.router.record(1, std::vector<int64_t>{0, 1, 1, 0});  // cumulative {3, 2, 2, 1}: 1.5
  es.router.record(2, std::vector<int64_t>{1, 1, 0, 0});  // cumulative {3, 3, 2, 0}: 1.5
  const std::string text = m.render(es);
  EXPECT_TRUE(contains(text, "# TYPE deepbatch:moe_routed_tokens_total counter\n")) << text;
  EXPECT_TRUE(contains(text, "# HELP deepbatch:moe_expert_load_imbalance "));
  EXPECT_TRUE(contains(text, "# TYPE deepbatch:moe_expert_load_imbalance gauge\n"));
  EXPECT_TRUE(contains(text, "deepbatch:moe_routed_tokens_total{model_name=\"moe\",layer=\"1\",expert=\"0\"} 3\n"));
  EXPECT_TRUE(contains(text, "deepbatch:moe_routed_tokens_total{model_name=\"moe\",layer=\"2\",expert=\"3\"} 0\n"));
  EXPECT_FALSE(contains(text, "layer=\"0\""));  // dense layers have no router
  EXPECT_TRUE(contains(text, "deepbatch:moe_expert_load_imbalance{model_name=\"moe\",layer=\"1\"} 1.5\n"));
  EXPECT_TRUE(contains(text, "deepbatch:moe_expert_load_imbalance{model_name=\"moe\",layer=\"2\"} 1.5\n"));
  EXPECT_TRUE(contains(text, "deepbatch:moe_expert_load_imbalance_max{model_name=\"moe\"} 1.5\n"));
  EXPECT_TRUE(contains(text, "deepbatch:moe_last_step_load_imbalance_max{model_name=\"moe\"} 2\n"));

  es.router.record(1, std::vector<int64_t>{0, 0, 0, 2});  // the totals follow the engine's
  es.router.record(2, std::vector<int64_t>{0, 0, 2, 0});
  EXPECT_TRUE(contains(m.render(es),
                       "deepbatch:moe_routed_tokens_total{model_name=\"moe\",layer=\"1\",expert=\"3\"} 3\n"));
}

TEST(ServerMetrics, ExpertParallelRankLoad) {
  ServerMetrics m("moe");
  EngineStats es;
  es.router = RouterStats(2, 0, 4);
  es.router.record(0, std::vector<int64_t>{3, 1, 1, 1});
  es.router.record(1, std::vector<int64_t>{1, 1, 2, 0});
  EXPECT_FALSE(contains(m.render(es), "expert_parallel")) << "one process has no per-rank series";
  es.router.expert_parallel_size = 2;  // rank 0: experts 0, 1 (6 tokens); rank 1: experts 2, 3 (4 tokens)
  const std::string text = m.render(es);
  EXPECT_TRUE(contains(text, "# TYPE deepbatch:expert_parallel_rank_routed_tokens_total counter\n")) << text;
  EXPECT_TRUE(contains(text, "deepbatch:expert_parallel_rank_routed_tokens_total{model_name=\"moe\",rank=\"0\"} 6\n"));
  EXPECT_TRUE(contains(text, "deepbatch:expert_parallel_rank_routed_tokens_total{model_name=\"moe\",rank=\"1\"} 4\n"));
  EXPECT_TRUE(contains(text, "deepbatch:expert_parallel_rank_load_share{model_name=\"moe\",rank=\"0\"} 0.6\n"));
  EXPECT_TRUE(contains(text, "deepbatch:expert_parallel_rank_load_share{model_name=\"moe\",rank=\"1\"} 0.4\n"));
  EXPECT_TRUE(contains(text, "deepbatch:expert_parallel_load_imbalance{model_name=\"moe\"} 1.2\n"));
}

TEST(ServerMetrics, DenseModelsHaveNoRouterMetrics) {
  ServerMetrics m("dense");
  const std::string text = m.render(EngineStats{});
  EXPECT_TRUE(contains(text, "deepbatch:num_requests_running{model_name=\"dense\"} 0\n")) << text;
  EXPECT_FALSE(contains(text, "moe_")) << text;
}

}  // namespace
}  // namespace db::server

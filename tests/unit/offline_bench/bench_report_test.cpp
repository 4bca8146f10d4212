#include "offline_bench/bench_report.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace db::bench {
namespace {

RequestRecord record(int32_t prompt, int32_t cached, int32_t generated, double ttft, double e2e,
                     FinishReason finish = FinishReason::Length) {
  RequestRecord r;
  r.stats.prompt_tokens = prompt;
  r.stats.cached_prompt_tokens = cached;
  r.stats.generated_tokens = generated;
  r.stats.ttft_seconds = ttft;
  r.stats.e2e_seconds = e2e;
  r.finish = finish;
  return r;
}

RunMeasurements sample_measurements() {
  RunMeasurements m;
  m.max_num_seqs = 8;
  m.phase = Phase::Mixed;
  m.wall_seconds = 2.0;
  m.requests = {record(100, 0, 11, 0.5, 1.5),   // tpot 0.1
                record(100, 50, 5, 0.2, 1.0),   // tpot 0.2
                record(60, 10, 1, 0.3, 0.3),    // one token: no tpot
                record(40, 0, 0, 0, 0.1, FinishReason::Error)};
  m.computed_prompt_tokens = 240;
  m.preemptions = 2;
  m.steps = 30;
  m.peak_kv_usage = 0.75;
  m.mean_kv_usage = 0.5;
  m.decode_window_seconds = 1.0;
  m.decode_window_tokens = 12;
  return m;
}

TEST(RunReport, CountsRatesAndLatencies) {
  const RunReport r = make_run_report(sample_measurements());
  EXPECT_EQ(r.max_num_seqs, 8);
  EXPECT_EQ(r.requests, 4);
  EXPECT_EQ(r.failed_requests, 1);
  EXPECT_EQ(r.prompt_tokens, 300);
  EXPECT_EQ(r.cached_prompt_tokens, 60);
  EXPECT_EQ(r.computed_prompt_tokens, 240);
  EXPECT_EQ(r.generated_tokens, 17);
  EXPECT_DOUBLE_EQ(r.requests_per_s, 2.0);
  EXPECT_DOUBLE_EQ(r.prompt_tokens_per_s, 120.0);
  EXPECT_DOUBLE_EQ(r.generated_tokens_per_s, 8.5);
  EXPECT_DOUBLE_EQ(r.total_tokens_per_s, 128.5);
  EXPECT_DOUBLE_EQ(r.decode_tokens_per_s, 0.0);  // mixed phase: no decode window
  EXPECT_EQ(r.ttft.count, 3);
  EXPECT_DOUBLE_EQ(r.ttft.p50, 0.3);
  EXPECT_DOUBLE_EQ(r.ttft.mean, (0.5 + 0.2 + 0.3) / 3);
  EXPECT_EQ(r.tpot.count, 2);
  EXPECT_DOUBLE_EQ(r.tpot.mean, 0.15);
  EXPECT_DOUBLE_EQ(r.tpot.p90, 0.19);
  EXPECT_EQ(r.e2e.count, 3);
  EXPECT_DOUBLE_EQ(r.e2e.max, 1.5);
  EXPECT_DOUBLE_EQ(r.prefix_cache_hit_rate, 0.2);
  EXPECT_EQ(r.preemptions, 2);
  EXPECT_EQ(r.steps, 30);
  EXPECT_DOUBLE_EQ(r.peak_kv_usage, 0.75);
}

TEST(RunReport, DecodePhaseUsesTheDecodeWindow) {
  RunMeasurements m = sample_measurements();
  m.phase = Phase::Decode;
  const RunReport r = make_run_report(m);
  EXPECT_DOUBLE_EQ(r.decode_tokens_per_s, 12.0);
  EXPECT_DOUBLE_EQ(to_json(r).at("decode_tokens_per_s").get<double>(), 12.0);
  EXPECT_FALSE(to_json(make_run_report(sample_measurements())).contains("decode_tokens_per_s"));
}

TEST(RunReport, JsonCarriesEveryFigure) {
  const auto j = to_json(make_run_report(sample_measurements()));
  EXPECT_EQ(j.at("phase"), "mixed");
  EXPECT_EQ(j.at("requests"), 4);
  EXPECT_EQ(j.at("prompt_tokens"), 300);
  EXPECT_EQ(j.at("cached_prompt_tokens"), 60);
  EXPECT_EQ(j.at("generated_tokens"), 17);
  EXPECT_EQ(j.at("failed_requests"), 1);
  EXPECT_DOUBLE_EQ(j.at("ttft_seconds").at("p50").get<double>(), 0.3);
  EXPECT_EQ(j.at("tpot_seconds").at("count"), 2);
  for (const char* key : {"wall_seconds", "requests_per_s", "prompt_tokens_per_s", "generated_tokens_per_s",
                          "total_tokens_per_s", "e2e_seconds", "peak_kv_usage", "mean_kv_usage",
                          "prefix_cache_hit_rate", "preemptions", "steps", "max_num_seqs", "computed_prompt_tokens"})
    EXPECT_TRUE(j.contains(key)) << key;
}

TEST(BenchJson, HoldsSettingsWorkloadDefinitionsAndRuns) {
  WorkloadSpec w;
  w.num_requests = 4;
  w.input_len = parse_length_dist("uniform:8:16", "x");
  w.output_len = parse_length_dist("8", "x");
  w.seed = 3;
  const RunReport r = make_run_report(sample_measurements());
  const auto j = bench_json({{"model", "m.gguf"}}, w, {r, r});
  EXPECT_EQ(j.at("settings").at("model"), "m.gguf");
  EXPECT_EQ(j.at("workload").at("input_len"), "uniform:8:16");
  EXPECT_EQ(j.at("workload").at("output_len"), "8");
  EXPECT_EQ(j.at("workload").at("seed"), 3);
  EXPECT_TRUE(j.at("definitions").contains("prompt_tokens_per_s"));
  EXPECT_EQ(j.at("runs").size(), 2u);
}

TEST(Table, OneRowPerRunInBothTables) {
  RunReport a = make_run_report(sample_measurements());
  RunReport b = a;
  b.max_num_seqs = 64;
  const std::string t = format_table({a, b});
  EXPECT_NE(t.find("prompt_t/s"), std::string::npos);
  EXPECT_NE(t.find("TTFT p50/p90/p99 ms"), std::string::npos);
  EXPECT_NE(t.find("300.0/460.0/496.0"), std::string::npos);  // TTFT p50/p90/p99 of 0.2, 0.3, 0.5 s
  EXPECT_NE(t.find("    64 mixed"), std::string::npos);
}

TEST(Phase, NamesRoundTrip) {
  for (Phase p : {Phase::Mixed, Phase::Prefill, Phase::Decode}) EXPECT_EQ(parse_phase(phase_name(p)), p);
  EXPECT_THROW(parse_phase("both"), Error);
}

}  // namespace
}  // namespace db::bench

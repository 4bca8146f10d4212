// `deepbatch bench` on the default model with tiny workloads: exact token counts
// in the JSON report, prefix-cache hits for a shared prefix, and the prefill and
// decode phases; on a tiny DeepSeek model, the router statistics.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "bundle/model_bundle.h"
#include "cli_test_util.h"
#include "default_model.h"
#include "gguf_copy.h"
#include "offline_bench/bench_runner.h"
#include "scratch_dir.h"

namespace db::bench {
namespace {

using test::kDefaultModelPath;

class OfflineBench : public test::DefaultModelSuite<ModelBundle> {
 protected:
  // Runs `deepbatch bench` with `args` and returns its JSON report.
  static nlohmann::json run_bench_cli(std::vector<std::string> args) {
    const std::string dir = test::make_temp_dir("bench");
    const std::string json_path = dir + "/report.json";
    std::vector<std::string> all = {"bench", "-m", kDefaultModelPath, "-t", "2", "--kv-cache-memory", "64M",
                                    "--output-json", json_path};
    all.insert(all.end(), args.begin(), args.end());
    const test::CliResult r = test::run_deepbatch(all);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("prompt_t/s"), std::string::npos) << r.out;
    const std::string text = test::read_text_file(json_path);
    std::filesystem::remove_all(dir);
    return text.empty() ? nlohmann::json::object() : nlohmann::json::parse(text);
  }

  static std::vector<BenchRequest> workload(const WorkloadSpec& spec) {
    return make_workload(spec, prompt_token_pool(model_->tokenizer()));
  }
};


WorkloadSpec tiny_spec() {
  WorkloadSpec s;
  s.num_requests = 8;
  s.input_len = parse_length_dist("uniform:16:32", "x");
  s.output_len = parse_length_dist("8", "x");
  s.seed = 11;
  return s;
}

TEST_F(OfflineBench, CliReportCountsAreExactForEveryBatchSize) {
  const WorkloadSpec spec = tiny_spec();
  int64_t prompt_tokens = 0;
  for (const BenchRequest& r : workload(spec)) prompt_tokens += static_cast<int64_t>(r.prompt.size());

  const auto j = run_bench_cli({"--num-requests", "8", "--input-len", "uniform:16:32", "--output-len", "8", "--seed",
                                "11", "--batch-sizes", "2,8"});
  ASSERT_TRUE(j.contains("runs")) << j.dump();
  EXPECT_EQ(j.at("workload").at("input_len"), "uniform:16:32");
  EXPECT_TRUE(j.at("definitions").contains("prompt_tokens_per_s"));
  ASSERT_EQ(j.at("runs").size(), 2u);
  const int expected_seqs[] = {2, 8};
  for (size_t i = 0; i < 2; ++i) {
    const auto& run = j.at("runs")[i];
    SCOPED_TRACE(run.dump());
    EXPECT_EQ(run.at("max_num_seqs"), expected_seqs[i]);
    EXPECT_EQ(run.at("phase"), "mixed");
    EXPECT_EQ(run.at("requests"), 8);
    EXPECT_EQ(run.at("failed_requests"), 0);
    EXPECT_EQ(run.at("prompt_tokens"), prompt_tokens);
    EXPECT_EQ(run.at("generated_tokens"), 8 * 8);
    EXPECT_EQ(run.at("preemptions"), 0);
    EXPECT_EQ(run.at("computed_prompt_tokens").get<int64_t>() + run.at("cached_prompt_tokens").get<int64_t>(),
              prompt_tokens);
    EXPECT_EQ(run.at("ttft_seconds").at("count"), 8);
    EXPECT_EQ(run.at("tpot_seconds").at("count"), 8);
    EXPECT_GT(run.at("steps").get<int64_t>(), 7);
    EXPECT_GT(run.at("peak_kv_usage").get<double>(), 0.0);
    EXPECT_GT(run.at("generated_tokens_per_s").get<double>(), 0.0);
    EXPECT_LE(run.at("ttft_seconds").at("p50").get<double>(), run.at("ttft_seconds").at("p99").get<double>());
    EXPECT_FALSE(run.contains("router"));  // a dense model
  }
}

TEST_F(OfflineBench, SharedPrefixIsServedFromTheCache) {
  // Half of 8 requests start with the same 16 tokens (one KV block). One sequence
  // at a time: each sharing request after the first finds the block cached.
  const auto j = run_bench_cli({"--num-requests", "8", "--input-len", "32", "--output-len", "4",
                                "--shared-prefix-fraction", "0.5", "--shared-prefix-len", "16", "--batch-sizes", "1"});
  ASSERT_TRUE(j.contains("runs")) << j.dump();
  const auto& run = j.at("runs")[0];
  EXPECT_EQ(run.at("prompt_tokens"), 8 * 32);
  EXPECT_EQ(run.at("cached_prompt_tokens"), 3 * 16);
  EXPECT_EQ(run.at("computed_prompt_tokens"), 8 * 32 - 3 * 16);
  EXPECT_DOUBLE_EQ(run.at("prefix_cache_hit_rate").get<double>(), 48.0 / 256.0);
  EXPECT_EQ(run.at("generated_tokens"), 8 * 4);
}

TEST_F(OfflineBench, CliRejectsBadWorkloadsClearly) {
  const std::vector<std::string> base = {"bench", "-m", kDefaultModelPath, "-t", "2", "--kv-cache-memory", "64M"};
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return test::run_deepbatch(args);
  };
  const test::CliResult too_long = run({"--input-len", "uniform:100:100000", "--output-len", "8"});
  EXPECT_EQ(too_long.exit_code, 1);
  EXPECT_NE(too_long.err.find("context"), std::string::npos) << too_long.err;
  const test::CliResult bad_dist = run({"--input-len", "poisson:5"});
  EXPECT_EQ(bad_dist.exit_code, 1);
  EXPECT_NE(bad_dist.err.find("--input-len"), std::string::npos) << bad_dist.err;
  const test::CliResult bad_prefix = run({"--input-len", "16", "--shared-prefix-fraction", "0.5",
                                          "--shared-prefix-len", "16"});
  EXPECT_EQ(bad_prefix.exit_code, 1);
  EXPECT_NE(bad_prefix.err.find("shared prefix"), std::string::npos) << bad_prefix.err;
}

RunConfig small_run(Phase phase, int max_num_seqs) {
  RunConfig cfg;
  cfg.engine.threads = 2;
  cfg.engine.max_num_seqs = max_num_seqs;
  cfg.engine.kv_cache_memory = int64_t{64} << 20;
  cfg.phase = phase;
  return cfg;
}

TEST_F(OfflineBench, PrefillPhaseSamplesOneTokenPerRequest) {
  const auto reqs = workload(tiny_spec());
  const RunReport r = make_run_report(run_workload(*model_, small_run(Phase::Prefill, 8), reqs));
  EXPECT_EQ(r.requests, 8);
  EXPECT_EQ(r.generated_tokens, 8);
  EXPECT_EQ(r.tpot.count, 0);
  EXPECT_GT(r.prompt_tokens_per_s, 0.0);
}

TEST_F(OfflineBench, DecodePhaseRunsWavesAndTimesTheirDecode) {
  const auto reqs = workload(tiny_spec());
  RunConfig cfg = small_run(Phase::Decode, 4);
  WorkloadSpec warm = tiny_spec();
  warm.num_requests = 2;
  warm.seed = 99;
  cfg.warmup = workload(warm);
  const RunMeasurements m = run_workload(*model_, cfg, reqs);
  const RunReport r = make_run_report(m);
  EXPECT_EQ(r.generated_tokens, 64);  // the warm-up's tokens are not counted
  EXPECT_EQ(r.requests, 8);
  // Two waves of 4; after each wave's prompts are in, at most 7 tokens per request remain.
  EXPECT_GT(m.decode_window_tokens, 0);
  EXPECT_LE(m.decode_window_tokens, 2 * 4 * 7);
  EXPECT_GT(m.decode_window_seconds, 0.0);
  EXPECT_GT(r.decode_tokens_per_s, 0.0);
  EXPECT_EQ(r.cached_prompt_tokens, 0);
}

// The tiny DeepSeek-V2 fixture (3 layers, the first dense; 8 routed experts, 3 per
// token) with a byte-level tokenizer: every token a run forwarded (its computed
// prompt tokens and each sampled token but a request's last) counts once per
// chosen expert in each MoE layer; the warm-up's are not counted.
TEST(OfflineBenchMoe, ReportsRouterStatisticsPerLayer) {
  test::ScratchDir dir("bench_moe");
  const std::string model = dir.file("deepseek.gguf"), json_path = dir.file("report.json");
  test::write_with_tokenizer(std::string(DB_TEST_DATA) + "/model/deepseek_v2_tiny/model-f32.gguf", model);
  const test::CliResult r = test::run_deepbatch({"bench", "-m", model, "-t", "2", "--kv-cache-memory", "4M",
                                                 "--num-requests", "6", "--input-len", "uniform:8:24", "--output-len",
                                                 "6", "--batch-sizes", "1,4", "--warmup", "2", "--output-json",
                                                 json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MoE router"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("imbalance min/median/max"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(test::read_text_file(json_path));
  ASSERT_EQ(j.at("runs").size(), 2u);
  EXPECT_TRUE(j.at("definitions").contains("router"));
  for (const auto& run : j.at("runs")) {
    SCOPED_TRACE(run.dump());
    const auto& router = run.at("router");
    EXPECT_EQ(router.at("n_experts"), 8);
    EXPECT_EQ(router.at("steps"), run.at("steps"));
    const int64_t forwarded = run.at("computed_prompt_tokens").get<int64_t>() +
                              run.at("generated_tokens").get<int64_t>() - run.at("requests").get<int64_t>();
    ASSERT_EQ(router.at("layers").size(), 2u);
    for (const auto& layer : router.at("layers")) {
      EXPECT_EQ(layer.at("routed_tokens").get<int64_t>(), 3 * forwarded);
      int64_t sum = 0;
      for (const auto& t : layer.at("tokens_per_expert")) sum += t.get<int64_t>();
      EXPECT_EQ(sum, 3 * forwarded);
      EXPECT_GE(layer.at("imbalance").get<double>(), 1.0);
    }
    EXPECT_LE(router.at("imbalance").at("min").get<double>(), router.at("imbalance").at("max").get<double>());
  }
}

}  // namespace
}  // namespace db::bench

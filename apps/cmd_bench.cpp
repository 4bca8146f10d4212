// `deepbatch bench`: offline throughput and latency of the engine on a synthetic
// workload, one fresh engine per max-num-seqs value of the sweep; under mpirun with
// --tensor-parallel-size or --expert-parallel-size, over a model split across the ranks.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bundle/model_bundle.h"
#include "cli_options.h"
#include "commands.h"
#include "engine_options.h"
#include "offline_bench/bench_report.h"
#include "offline_bench/bench_runner.h"
#include "offline_bench/workload.h"
#include "tensor_parallel.h"
#include "util/error.h"

namespace db::cli {

namespace {

struct BenchOptions {
  ModelOptions model;
  int32_t num_requests = 64;
  std::string input_len = "128", output_len = "64";
  double shared_prefix_fraction = 0;
  int32_t shared_prefix_len = 0;
  uint64_t seed = 0;
  std::vector<int> batch_sizes{EngineConfig{}.max_num_seqs};
  EngineOptions engine;  // max_num_seqs comes from batch_sizes
  std::string phase = "mixed";
  int32_t warmup = 0;
  double sample_interval_ms = 2;
  std::string output_json;
};

bench::WorkloadSpec workload_spec(const BenchOptions& o) {
  bench::WorkloadSpec w;
  w.num_requests = o.num_requests;
  w.input_len = parse_length_dist(o.input_len, "--input-len");
  w.output_len = parse_length_dist(o.output_len, "--output-len");
  w.shared_prefix_fraction = o.shared_prefix_fraction;
  w.shared_prefix_len = o.shared_prefix_len;
  w.seed = o.seed;
  bench::validate(w);
  return w;
}

EngineConfig engine_config(const BenchOptions& o, int max_num_seqs) {
  EngineOptions e = o.engine;
  e.max_num_seqs = max_num_seqs;
  return make_engine_config(o.model, e);
}

nlohmann::json settings_json(const BenchOptions& o, const EngineConfig& c, bench::Phase phase) {
  return {{"model", o.model.model},
          {"phase", bench::phase_name(phase)},
          {"threads", c.threads},
          {"block_size", c.block_size},
          {"kv_dtype", o.model.kv_dtype},
          {"max_num_batched_tokens", c.max_num_batched_tokens},
          {"long_prefill_threshold", c.long_prefill_threshold},
          {"kv_cache_memory", c.kv_cache_memory},
          {"enable_prefix_caching", c.enable_prefix_caching},
          {"batch_sizes", o.batch_sizes},
          {"tensor_parallel_size", o.engine.parallel.tensor_parallel_size},
          {"expert_parallel_size", o.engine.parallel.expert_parallel_size},
          {"warmup_requests", o.warmup}};
}

int run_bench(const BenchOptions& o) {
  // Checked on every rank alike before the ranks meet, so that a bad option ends each of them.
  const bench::WorkloadSpec spec = workload_spec(o);
  const bench::Phase phase = bench::parse_phase(o.phase);
  if (o.batch_sizes.empty()) throw Error("--batch-sizes needs at least one value");
  for (int b : o.batch_sizes)
    if (b < 1) throw Error("--batch-sizes values must be at least 1, got " + std::to_string(b));
  // With --tensor-parallel-size or --expert-parallel-size above 1, rank 0 runs the bench and the
  // other ranks compute. Every run's engine takes the KV pool the ranks agree on once (their
  // KV stores outlive the engines of the sweep).
  EngineConfig agreed = engine_config(o, o.batch_sizes.front());
  const std::unique_ptr<dist::Communicator> group = open_tensor_parallel(o.engine.parallel);
  if (group && group->rank() != 0) return run_worker_rank(o.model, o.engine.parallel, agreed, *group);
  std::ofstream json_out;  // opened first, so that an unwritable path fails before the runs
  if (!o.output_json.empty()) {
    json_out.open(o.output_json);
    if (!json_out) throw Error(o.output_json + ": cannot open the JSON report for writing");
  }
  auto bundle = ModelBundle::open(o.model.model, o.model.threads,
                                  shard_load_options(o.model, o.engine.parallel, group.get()));
  if (group) agree_kv_pool_on_rank0(bundle->model(), o.engine.parallel, agreed, *group);
  const int64_t context = bundle->model().config().max_context;
  if (int64_t{spec.input_len.max()} + spec.output_len.max() > context)
    throw Error("--input-len " + spec.input_len.describe() + " plus --output-len " + spec.output_len.describe() +
                " can exceed the model's context of " + std::to_string(context) + " tokens");
  const std::vector<int32_t> pool = bench::prompt_token_pool(bundle->tokenizer());
  const std::vector<bench::BenchRequest> workload = bench::make_workload(spec, pool);
  std::vector<bench::BenchRequest> warmup;
  if (o.warmup > 0) {
    bench::WorkloadSpec w = spec;
    w.num_requests = o.warmup;
    w.seed = spec.seed ^ 0x5EEDF00Dull;  // other tokens, so the warm-up leaves nothing in the prefix cache to hit
    warmup = bench::make_workload(w, pool);
  }

  std::fprintf(stderr, "[bench] %d requests, input %s, output %s, shared prefix %.2f x %d tokens, phase %s\n",
               spec.num_requests, spec.input_len.describe().c_str(), spec.output_len.describe().c_str(),
               spec.shared_prefix_fraction, spec.shared_prefix_len, bench::phase_name(phase));
  std::vector<bench::RunReport> reports;
  for (int b : o.batch_sizes) {
    bench::RunConfig cfg;
    cfg.engine = engine_config(o, b);
    cfg.engine.kv_cache_memory = agreed.kv_cache_memory;
    cfg.phase = phase;
    cfg.warmup = warmup;
    cfg.sample_interval_s = o.sample_interval_ms / 1000.0;
    std::fprintf(stderr, "[bench] max-num-seqs %d ...\n", b);
    reports.push_back(bench::make_run_report(bench::run_workload(*bundle, cfg, workload)));
    std::fprintf(stderr, "[bench] max-num-seqs %d: %.3f s, %.1f generated tok/s\n", b, reports.back().wall_seconds,
                 reports.back().generated_tokens_per_s);
  }
  std::fputs(bench::format_table(reports).c_str(), stdout);
  std::fputs(bench::format_router_table(reports).c_str(), stdout);
  std::fputs(bench::format_spec_table(reports).c_str(), stdout);
  std::fputs(bench::format_pool_table(reports).c_str(), stdout);
  if (!o.output_json.empty()) {
    const auto j = bench::bench_json(settings_json(o, engine_config(o, o.batch_sizes.front()), phase), spec, reports);
    if (!(json_out << j.dump(2) << "\n" << std::flush)) throw Error(o.output_json + ": cannot write the JSON report");
  }
  return 0;
}

void add_workload_options(CLI::App& cmd, BenchOptions& o) {
  cmd.add_option("--num-requests", o.num_requests, "Requests in the workload")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--input-len", o.input_len,
                 "Prompt length in tokens: N, uniform:MIN:MAX, normal:MEAN:SD (clipped to mean +- 3 sd) "
                 "or lognormal:MEAN:SD")
      ->capture_default_str();
  cmd.add_option("--output-len", o.output_len, "Generated tokens per request (exact: EOS is ignored); same forms")
      ->capture_default_str();
  cmd.add_option("--shared-prefix-fraction", o.shared_prefix_fraction,
                 "Share of requests whose prompt starts with one common prefix")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--shared-prefix-len", o.shared_prefix_len, "Tokens in the common prefix (part of --input-len)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "Workload seed (prompts are random non-special token ids)")->capture_default_str();
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand(
      "bench",
      "Offline engine throughput and latency on a synthetic workload (greedy, EOS ignored), swept over max-num-seqs");
  cmd->footer(
      "Phases (--phase):\n"
      "  mixed    all requests at once (continuous batching). Prefill and decode share engine steps, so\n"
      "           prompt tok/s and generated tok/s are token counts / wall time of the whole run, not the\n"
      "           speeds of separate phases.\n"
      "  prefill  as mixed with max_tokens = 1: prompt tok/s is the prefill speed.\n"
      "  decode   requests run in waves of max-num-seqs; decode tok/s counts tokens sampled after every\n"
      "           prompt of the wave was computed, over that time (the speed of decoding that batch).\n"
      "prompt tok/s counts computed prompt tokens (prefix-cache hits excluded). TPOT = (e2e - TTFT) /\n"
      "(generated - 1). KV usage is sampled from the engine's stats every --sample-interval-ms.\n"
      "MoE models: a router summary follows, load imbalance (tokens on a layer's busiest expert / mean\n"
      "per expert) over the layers; --output-json holds the tokens per layer and expert of each run.");
  auto o = std::make_shared<BenchOptions>();
  o->engine.runs_split_model = true;
  add_model_options(*cmd, o->model);
  add_workload_options(*cmd, *o);
  cmd->add_option("--batch-sizes", o->batch_sizes, "max-num-seqs values to sweep, one fresh engine each (e.g. 1,8,64)")
      ->delimiter(',')
      ->capture_default_str();
  add_engine_options(*cmd, o->engine, /*with_max_num_seqs=*/false);
  cmd->add_option("--phase", o->phase, "mixed, prefill or decode (see below)")
      ->check(CLI::IsMember({"mixed", "prefill", "decode"}))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Warm-up requests run on each engine before measuring (other prompts)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--sample-interval-ms", o->sample_interval_ms, "How often the engine's KV usage is sampled")
      ->check(CLI::Range(0.1, 1000.0))
      ->capture_default_str();
  cmd->add_option("--output-json", o->output_json, "Write the report as JSON to this file");
  cmd->callback([o, &action] { action = [o] { return run_bench(*o); }; });
  return cmd;
}

}  // namespace db::cli

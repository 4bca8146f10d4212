// `deepbatch serve`: the OpenAI-compatible HTTP server over one engine.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "bundle/model_bundle.h"
#include "cli_options.h"
#include "commands.h"
#include "engine/engine.h"
#include "engine_options.h"
#include "tensor_parallel.h"
#include "memory/read_bandwidth.h"
#include "model/sharded_model.h"
#include "server/app.h"
#include "server/data_dir.h"
#include "server/shutdown_signal.h"
#include "server/tenant_registry.h"
#include "util/error.h"
#include "util/thread_pool.h"

namespace db::cli {

namespace {

struct ServeOptions {
  ModelOptions model;
  EngineOptions engine;
  server::ServeConfig serve;
  bool no_batch_api = false;  // --no-batch-api: leave /v1/files and /v1/batches unmounted
  std::string api_keys_file;  // --api-keys: the tenants (server/tenant_registry.h), read before the model loads
  std::string metrics_names = "deepbatch";  // --metrics-names: server::MetricNaming by name
  double memory_bandwidth_gbs = 0;  // --memory-bandwidth: GB/s for the roofline gauge (0 = measure at start)
  OutputParserOptions parsers;  // --reasoning-parser, --tool-call-parser
};

std::string default_model_name(const std::string& model_path) {
  namespace fs = std::filesystem;
  fs::path p(model_path);
  if (p.has_filename() && p.filename() != ".")
    return p.extension() == ".gguf" ? p.stem().string() : p.filename().string();
  return p.parent_path().filename().string();
}

// Seconds a tensor-parallel server that lost a rank answers 503 before the job ends
// (non-zero): long enough for clients and probes to see why.
constexpr double kDrainAfterLostRankSeconds = 5.0;

int run_serve(ServeOptions o) {
  server::block_shutdown_signals();  // before any thread starts
  if (!o.api_keys_file.empty()) o.serve.tenants = server::load_tenants_file(o.api_keys_file);
  o.serve.metric_naming = *server::parse_metric_naming(o.metrics_names);  // checked by the option
  EngineConfig cfg = make_engine_config(o.model, o.engine);
  // With --tensor-parallel-size above 1, rank 0 serves and the other ranks compute.
  const std::unique_ptr<dist::Communicator> group = open_tensor_parallel(o.engine.parallel);
  if (group && group->rank() != 0) return run_worker_rank(o.model, o.engine.parallel, cfg, *group);
  auto bundle = ModelBundle::open(o.model.model, o.model.threads,
                                  shard_load_options(o.model, o.engine.parallel, group.get()));
  if (group) {
    agree_kv_pool_on_rank0(bundle->model(), o.engine.parallel, cfg, *group);
    // A lost rank: answer 503 (requests, /health) for a while instead of vanishing, then end the job.
    dynamic_cast<ShardedModel&>(bundle->model()).drain_on_failure(kDrainAfterLostRankSeconds);
  }
  apply_output_parsers(*bundle, o.parsers);
  if (o.serve.model_name.empty()) o.serve.model_name = default_model_name(o.model.model);
  o.serve.max_context = bundle->model().config().max_context;
  if (o.no_batch_api) o.serve.data_dir.clear();
  else if (o.serve.data_dir.empty()) o.serve.data_dir = server::default_data_dir();
  if (o.memory_bandwidth_gbs > 0) {
    o.serve.machine_read_bandwidth = o.memory_bandwidth_gbs * 1e9;
  } else {  // before the engine's threads start, so they do not disturb it
    ThreadPool pool(cfg.threads);
    o.serve.machine_read_bandwidth = measure_read_bandwidth(pool);
    std::fprintf(stderr, "deepbatch serve: memory read bandwidth %.1f GB/s (%d threads)\n",
                 o.serve.machine_read_bandwidth / 1e9, cfg.threads);
  }
  cfg.read_bytes_per_s = o.serve.machine_read_bandwidth;  // measured once, for the MoE batch choice too
  Engine engine(*bundle, cfg);
  std::fprintf(stderr, "deepbatch serve: %s\n", engine.kv_cache_summary().c_str());
  if (cfg.sla.enabled())
    std::fprintf(stderr, "deepbatch serve: SLA controller on (tpot p99 %.3f s, ttft p99 %.3f s; 0 = none)\n",
                 cfg.sla.tpot_p99_s, cfg.sla.ttft_p99_s);
  server::ServerApp app(engine, *bundle, o.serve);
  app.start();
  if (!o.serve.data_dir.empty())
    std::printf("deepbatch serve: Batch API data in %s\n",
                std::filesystem::absolute(o.serve.data_dir).lexically_normal().c_str());
  std::printf("deepbatch serve: model %s, listening on http://%s:%d\n", o.serve.model_name.c_str(),
              o.serve.host.c_str(), app.port());
  std::fflush(stdout);
  const int sig = server::wait_for_shutdown_signal();
  std::fprintf(stderr, "deepbatch serve: signal %d, finishing in-flight requests (at most %.0f s)\n", sig,
               o.serve.shutdown_timeout_s);
  app.shutdown();
  std::fprintf(stderr, "deepbatch serve: stopped\n");
  return 0;
}

void add_serve_options(CLI::App& cmd, ServeOptions& o) {
  server::ServeConfig& s = o.serve;
  cmd.add_option("--host", s.host, "Address to bind")->capture_default_str();
  cmd.add_option("--port", s.port, "Port to listen on (0: any free port, printed at start)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  auto* api_key = cmd.add_option("--api-key", s.api_key,
                                 "Require 'Authorization: Bearer KEY' on /v1/* (/health and /metrics stay open)");
  cmd.add_option("--api-keys", o.api_keys_file,
                 "JSON file of tenants, one key each, with their priority class and quotas (instead of --api-key)")
      ->excludes(api_key);
  cmd.add_option("--served-model-name", s.model_name, "Model id in /v1/models and responses (default: file name)");
  cmd.add_option("--max-queued-requests", s.max_queued_requests,
                 "Waiting sequences (prompts x n) past which new requests get 429 (0 = no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--io-threads", s.io_threads, "HTTP I/O threads")->check(CLI::Range(1, 64))->capture_default_str();
  cmd.add_option("--prepare-threads", s.prepare_threads, "Threads that tokenize prompts")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd.add_option("--max-body-size", s.max_body_bytes, "Largest request body, e.g. 32M (larger: 413)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  cmd.add_option("--header-timeout", s.header_timeout_s, "Seconds a client may take to send a request head (else 408)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--data-dir", s.data_dir,
                 "Directory for the Batch API's files and batches (default: $XDG_DATA_HOME/deepbatch, "
                 "~/.local/share/deepbatch, or ./deepbatch-data)");
  cmd.add_flag("--no-batch-api", o.no_batch_api, "Serve no Batch API (/v1/files, /v1/batches)");
  cmd.add_option("--max-upload-size", s.max_upload_bytes,
                 "Largest Batch API upload (POST /v1/files), e.g. 200M; written to disk as it arrives (larger: 413)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  cmd.add_option("--max-concurrent-batches", s.max_concurrent_batches,
                 "Batch API batches running at once, all at background priority (more wait in creation order)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--memory-bandwidth", o.memory_bandwidth_gbs,
                 "The machine's memory read bandwidth in GB/s, the roofline gauge's reference (0 = measure at "
                 "start-up, about a second)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--max-choices-per-request", s.max_choices_per_request,
                 "Completions (prompts x n) one request may ask for (larger: 400; 0 = no limit)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--max-body-bytes-in-flight", s.max_body_bytes_in_flight,
                 "Request bodies held at once, all connections, e.g. 128M (past it: 503; 0 = no cap)")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
  cmd.add_option("--shutdown-timeout", s.shutdown_timeout_s,
                 "Seconds in-flight requests may take after SIGTERM before they are aborted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--metrics-names", o.metrics_names,
                 "Names on /metrics: deepbatch (deepbatch:*), vllm (vLLM's vllm:* names where vLLM has the "
                 "measurement, deepbatch:* for the rest) or both")
      ->check(CLI::IsMember({"deepbatch", "vllm", "both"}))
      ->capture_default_str();
}

}  // namespace

CLI::App* add_serve_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server (completions, chat, models, metrics)");
  auto o = std::make_shared<ServeOptions>();
  o->engine.runs_split_model = true;
  add_model_options(*cmd, o->model);
  add_output_parser_options(*cmd, o->parsers);
  add_serve_options(*cmd, *o);
  add_engine_options(*cmd, o->engine);
  cmd->callback([o, &action] { action = [o] { return run_serve(*o); }; });
  return cmd;
}

}  // namespace db::cli

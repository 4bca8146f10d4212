// `deepbatch run`: an offline batch job over an OpenAI Batch API JSONL file,
// writing OpenAI batch output records as requests finish; rerun to resume.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "batch/batch_job.h"
#include "bundle/model_bundle.h"
#include "cli_options.h"
#include "commands.h"
#include "engine_options.h"
#include "engine/engine.h"
#include "tensor_parallel.h"
#include "util/error.h"

namespace db::cli {

namespace {

struct RunOptions {
  ModelOptions model;
  EngineOptions engine;
  std::string input, output;
  std::string model_name;
  size_t max_in_flight = 4096;
  bool no_progress = false;
  OutputParserOptions parsers;
};

int run_batch(const RunOptions& o) {
  namespace fs = std::filesystem;
  if (!fs::exists(o.input)) throw Error(o.input + ": the batch input file does not exist");
  if (fs::exists(o.output) && fs::equivalent(o.input, o.output))
    throw Error("the output file must differ from the input file (" + o.input + ")");
  EngineConfig cfg = make_engine_config(o.model, o.engine);
  // With --tensor-parallel-size above 1, rank 0 runs the job and the other ranks compute.
  const std::unique_ptr<dist::Communicator> group = open_tensor_parallel(o.engine.parallel);
  if (group && group->rank() != 0) return run_worker_rank(o.model, o.engine.parallel, cfg, *group);
  auto bundle = ModelBundle::open(o.model.model, o.model.threads, shard_load_options(o.model, o.engine.parallel, group.get()));
  if (group) agree_kv_pool_on_rank0(bundle->model(), o.engine.parallel, cfg, *group);
  apply_output_parsers(*bundle, o.parsers);
  batch::BatchJobOptions job;
  job.input_path = o.input;
  job.output_path = o.output;
  job.model_name = o.model_name.empty() ? fs::path(o.model.model).filename().replace_extension().string()
                                        : o.model_name;
  if (job.model_name.empty()) job.model_name = fs::path(o.model.model).filename().string();
  job.max_context = bundle->model().config().max_context;
  job.max_in_flight = o.max_in_flight;
  job.progress_out = o.no_progress ? nullptr : stderr;
  job.progress_tty = ::isatty(STDERR_FILENO) != 0;
  Engine engine(*bundle, cfg);
  if (!o.no_progress) std::fprintf(stderr, "[deepbatch] %s\n", engine.kv_cache_summary().c_str());
  const batch::BatchSummary summary = batch::run_batch_job(engine, *bundle, job);
  std::fputs(batch::format_summary(summary, o.output).c_str(), stderr);
  return 0;
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand(
      "run", "Offline batch job over an OpenAI Batch API JSONL file (crash-safe: rerun the same command to resume)");
  auto o = std::make_shared<RunOptions>();
  o->engine.runs_split_model = true;
  add_model_options(*cmd, o->model);
  add_output_parser_options(*cmd, o->parsers);
  cmd->add_option("-i,--input", o->input, "Input JSONL: {custom_id, method, url, body} per line")->required();
  cmd->add_option("-o,--output", o->output, "Output JSONL (OpenAI batch output format); resumed when it exists")
      ->required();
  add_engine_options(*cmd, o->engine);
  cmd->add_option("--model-name", o->model_name, "Model name in responses of requests that name none");
  cmd->add_option("--max-in-flight", o->max_in_flight, "Requests handed to the engine and not yet finished, at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--no-progress", o->no_progress, "Print no progress, only the summary");
  cmd->callback([o, &action] { action = [o] { return run_batch(*o); }; });
  return cmd;
}

}  // namespace db::cli

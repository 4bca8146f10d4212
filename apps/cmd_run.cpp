// `deepbatch run`: an offline batch job over an OpenAI Batch API JSONL file,
// writing OpenAI batch output records as requests finish; rerun to resume.
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "batch/batch_job.h"
#include "cli_options.h"
#include "commands.h"
#include "engine/engine.h"
#include "runner/model_bundle.h"
#include "util/error.h"

namespace db::cli {

namespace {

struct RunOptions {
  ModelOptions model;
  std::string input, output;
  std::string model_name;
  int max_num_seqs = EngineConfig{}.max_num_seqs;
  int max_num_batched_tokens = EngineConfig{}.max_num_batched_tokens;
  int long_prefill_threshold = 0;
  std::string kv_cache_memory;
  bool enable_prefix_caching = true;
  size_t max_in_flight = 4096;
  bool no_progress = false;
};

// "1073741824", "512M", "1.5G", "64KiB" -> bytes (K/M/G/T are powers of 1024).
int64_t parse_byte_size(const std::string& text) {
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && (unit.substr(1) == "B" || unit.substr(1) == "IB")) unit = unit.substr(0, 1);
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  const double bytes = value * scale;
  if (pos == 0 || scale == 0 || !std::isfinite(bytes) || bytes < 1 || bytes > 9.0e18)
    throw Error("--kv-cache-memory must be a positive size in bytes with an optional K/M/G/T suffix, got '" + text +
                "'");
  return static_cast<int64_t>(bytes);
}

EngineConfig engine_config(const RunOptions& o) {
  EngineConfig c;
  c.threads = resolve_threads(o.model.threads);
  c.max_num_seqs = o.max_num_seqs;
  c.max_num_batched_tokens = o.max_num_batched_tokens;
  c.long_prefill_threshold = o.long_prefill_threshold;
  c.block_size = o.model.block_size;
  c.kv_dtype = parse_kv_dtype(o.model.kv_dtype);
  if (!o.kv_cache_memory.empty()) c.kv_cache_memory = parse_byte_size(o.kv_cache_memory);
  c.enable_prefix_caching = o.enable_prefix_caching;
  return c;
}

int run_batch(const RunOptions& o) {
  namespace fs = std::filesystem;
  if (!fs::exists(o.input)) throw Error(o.input + ": the batch input file does not exist");
  if (fs::exists(o.output) && fs::equivalent(o.input, o.output))
    throw Error("the output file must differ from the input file (" + o.input + ")");
  const EngineConfig cfg = engine_config(o);
  auto bundle = ModelBundle::open(o.model.model);
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
  const batch::BatchSummary summary = batch::run_batch_job(engine, *bundle, job);
  std::fputs(batch::format_summary(summary, o.output).c_str(), stderr);
  return 0;
}

void add_engine_options(CLI::App& cmd, RunOptions& o) {
  cmd.add_option("--max-num-seqs", o.max_num_seqs, "Running sequences at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--max-num-batched-tokens", o.max_num_batched_tokens, "Tokens per engine step at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--long-prefill-threshold", o.long_prefill_threshold,
                 "Prompt chunks longer than this are capped so short prompts run too (0 = auto)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd.add_option("--kv-cache-memory", o.kv_cache_memory,
                 "Bytes for the KV cache, e.g. 2G or 512M (default: a share of available memory)");
  cmd.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", o.enable_prefix_caching,
               "Reuse the KV cache of identical prompt prefixes (default on)");
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand(
      "run", "Offline batch job over an OpenAI Batch API JSONL file (crash-safe: rerun the same command to resume)");
  auto o = std::make_shared<RunOptions>();
  add_model_options(*cmd, o->model);
  cmd->add_option("-i,--input", o->input, "Input JSONL: {custom_id, method, url, body} per line")->required();
  cmd->add_option("-o,--output", o->output, "Output JSONL (OpenAI batch output format); resumed when it exists")
      ->required();
  add_engine_options(*cmd, *o);
  cmd->add_option("--model-name", o->model_name, "Model name in responses of requests that name none");
  cmd->add_option("--max-in-flight", o->max_in_flight, "Requests handed to the engine and not yet finished, at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--no-progress", o->no_progress, "Print no progress, only the summary");
  cmd->callback([o, &action] { action = [o] { return run_batch(*o); }; });
  return cmd;
}

}  // namespace db::cli

// `deepbatch generate`: one or more prompts, submitted together to the engine.
// One prompt streams its text to stdout as it arrives; several print in order
// when all are done.
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bundle/model_bundle.h"
#include "chat/chat_message.h"
#include "cli_options.h"
#include "commands.h"
#include "engine/engine.h"
#include "engine_options.h"

namespace db::cli {

namespace {

struct GenerateOptions {
  ModelOptions model;
  SamplingOptions sampling;
  EngineOptions engine;
  std::vector<std::string> prompts;
  bool chat = false;
  std::string system;
  bool quiet = false;
};

// Everything one request produced.
struct Generated {
  std::string text;
  FinishReason finish = FinishReason::None;
  std::string error;  // FinishReason::Error (or QueueTimeout): what went wrong
  RequestStats stats;
};

std::vector<int32_t> prompt_ids(const GenerateOptions& o, const ModelBundle& bundle, const std::string& prompt) {
  if (!o.chat) return bundle.encode_prompt(prompt);
  std::vector<ChatMessage> msgs;
  if (!o.system.empty()) msgs.push_back({"system", o.system});
  msgs.push_back({"user", prompt});
  return bundle.encode_chat(msgs);
}

// One request: prompt time = time to first token, decode = the tokens after the
// first over the time after it. Several: the latest first token and the mean
// per-sequence decode speed.
void print_stats(const std::vector<Generated>& results, const EngineStats& engine, double wall_seconds) {
  double prefill_seconds = 0, decode_rate_sum = 0;
  int decode_rates = 0;
  for (const Generated& g : results) {
    prefill_seconds = std::max(prefill_seconds, g.stats.ttft_seconds);
    const double decode_seconds = g.stats.e2e_seconds - g.stats.ttft_seconds;
    if (g.stats.generated_tokens > 1 && decode_seconds > 0) {
      decode_rate_sum += (g.stats.generated_tokens - 1) / decode_seconds;
      ++decode_rates;
    }
  }
  std::fprintf(stderr,
               "\n[deepbatch] %zu request(s): prompt %lld tokens in %.3f s (%.1f tok/s), %lld cached, "
               "generated %lld tokens in %.3f s, decode %.1f tok/s%s, %lld steps\n",
               results.size(), static_cast<long long>(engine.prompt_tokens), prefill_seconds,
               prefill_seconds > 0 ? engine.prompt_tokens / prefill_seconds : 0.0,
               static_cast<long long>(engine.cached_prompt_tokens), static_cast<long long>(engine.generated_tokens),
               wall_seconds, decode_rates > 0 ? decode_rate_sum / decode_rates : 0.0,
               results.size() > 1 ? " per sequence (mean)" : "", static_cast<long long>(engine.steps));
  const SpecDecodeStats& spec = engine.spec;
  if (!spec.proposer.empty())
    std::fprintf(stderr,
                 "[deepbatch] speculative decoding (%s): %lld drafts, %lld draft tokens, %lld accepted (%.1f%%), "
                 "mean accepted length %.2f, %lld paused decodes, last cost ratio %.3f, proposer %.2f s\n",
                 spec.proposer.c_str(), static_cast<long long>(spec.num_drafts),
                 static_cast<long long>(spec.num_draft_tokens), static_cast<long long>(spec.num_accepted_tokens),
                 100 * spec.acceptance_rate(), spec.mean_accepted_length(), static_cast<long long>(spec.paused),
                 spec.cost_ratio, spec.proposer_seconds);
}

int run_generate(const GenerateOptions& o) {
  auto bundle = ModelBundle::open(o.model.model, o.model.threads, load_options(o.model));
  const SamplingParams params = to_sampling_params(o.sampling);
  std::vector<EngineRequest> reqs;
  for (const std::string& p : o.prompts) {
    EngineRequest r;
    r.prompt = prompt_ids(o, *bundle, p);
    r.sampling = params;
    r.max_tokens = o.sampling.max_tokens;
    r.ignore_eos = o.sampling.ignore_eos;
    reqs.push_back(std::move(r));
  }
  Engine engine(*bundle, make_engine_config(o.model, o.engine));
  if (!o.quiet) std::fprintf(stderr, "[deepbatch] %s\n", engine.kv_cache_summary().c_str());
  const bool stream = reqs.size() == 1 && !o.quiet;
  if (stream && !o.chat) {
    std::fputs(o.prompts[0].c_str(), stdout);
    std::fflush(stdout);
  }
  std::mutex mu;
  std::vector<Generated> results(reqs.size());
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < reqs.size(); ++i) {
    engine.submit(reqs[i], [&, i](RequestId, const SampleOutput& out, const RequestStats& stats, bool final) {
      std::lock_guard<std::mutex> lock(mu);
      Generated& g = results[i];
      g.text += out.new_text;
      if (out.finish != FinishReason::None) g.finish = out.finish;
      if (out.finish == FinishReason::Error || out.finish == FinishReason::QueueTimeout) g.error = out.stop_reason;
      if (final) g.stats = stats;
      if (stream && !out.new_text.empty()) {
        std::fwrite(out.new_text.data(), 1, out.new_text.size(), stdout);
        std::fflush(stdout);
      }
    });
  }
  engine.wait_idle();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stream) std::fputs("\n", stdout);
  if (!stream && !o.quiet) {
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("=== [%zu] %s\n%s\n--- finish_reason: %s\n", i, o.prompts[i].c_str(), results[i].text.c_str(),
                  finish_reason_name(results[i].finish));
  }
  std::fflush(stdout);
  print_stats(results, engine.stats(), wall);
  int rc = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    // A queue timeout (the engine set to reject long waits) fails the prompt like an error.
    if (results[i].finish != FinishReason::Error && results[i].finish != FinishReason::QueueTimeout) continue;
    std::fprintf(stderr, "deepbatch: prompt %zu failed: %s\n", i, results[i].error.c_str());
    rc = 1;
  }
  return rc;
}

}  // namespace

CLI::App* add_generate_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand("generate", "Generate text for one or more prompts (batched together by the engine)");
  auto o = std::make_shared<GenerateOptions>();
  add_model_options(*cmd, o->model);
  add_sampling_options(*cmd, o->sampling);
  add_engine_options(*cmd, o->engine);
  cmd->add_option("-p,--prompt", o->prompts, "Prompt text (repeat for several prompts)")->required();
  cmd->add_flag("--chat", o->chat, "Wrap each prompt as a user turn with the model's chat template");
  cmd->add_option("--system", o->system, "System message (with --chat)");
  cmd->add_flag("-q,--quiet", o->quiet, "Print only the statistics");
  cmd->callback([o, &action] { action = [o] { return run_generate(*o); }; });
  return cmd;
}

}  // namespace db::cli

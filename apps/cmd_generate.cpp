// `deepbatch generate`: one or more prompts, generated together as one batch.
#include <cstdio>
#include <iostream>

#include "cli_options.h"
#include "commands.h"
#include "runner/batch_generator.h"
#include "runner/model_bundle.h"
#include "tokenizer/detokenizer.h"

namespace db::cli {

namespace {

struct GenerateOptions {
  ModelOptions model;
  SamplingOptions sampling;
  std::vector<std::string> prompts;
  bool chat = false;
  std::string system;
  int32_t max_batched_tokens = 512;
  bool quiet = false;
};

void print_stats(const GenerateStats& s, size_t n_requests) {
  const double decode_tokens = static_cast<double>(s.generated_tokens) - static_cast<double>(n_requests);
  std::fprintf(stderr,
               "\n[deepbatch] %zu request(s): prompt %lld tokens in %.3f s (%.1f tok/s), "
               "generated %lld tokens, decode %.1f tok/s, %lld steps\n",
               n_requests, static_cast<long long>(s.prompt_tokens), s.prefill_seconds,
               s.prefill_seconds > 0 ? s.prompt_tokens / s.prefill_seconds : 0.0,
               static_cast<long long>(s.generated_tokens),
               s.decode_seconds > 0 ? decode_tokens / s.decode_seconds : 0.0, static_cast<long long>(s.steps));
}

int run_generate(const GenerateOptions& o) {
  auto bundle = ModelBundle::open(o.model.model);
  const SamplingParams params = to_sampling_params(o.sampling);
  std::vector<GenerateRequest> reqs;
  for (const std::string& p : o.prompts) {
    GenerateRequest r;
    if (o.chat) {
      std::vector<ChatMessage> msgs;
      if (!o.system.empty()) msgs.push_back({"system", o.system});
      msgs.push_back({"user", p});
      r.prompt = bundle->encode_chat(msgs);
    } else {
      r.prompt = bundle->encode_prompt(p);
    }
    r.sampling = params;
    r.max_new_tokens = o.sampling.max_tokens;
    r.ignore_eos = o.sampling.ignore_eos;
    reqs.push_back(std::move(r));
  }
  ThreadPool pool(resolve_threads(o.model.threads));
  GeneratorOptions gopts;
  gopts.block_size = o.model.block_size;
  gopts.kv_dtype = parse_kv_dtype(o.model.kv_dtype);
  gopts.max_batched_tokens = o.max_batched_tokens;
  BatchGenerator gen(bundle->model(), bundle->tokenizer(), pool, gopts);

  // One prompt streams to stdout as it is generated; several print when done.
  const bool stream = reqs.size() == 1 && !o.quiet;
  IncrementalDetokenizer detok(bundle->tokenizer(), /*skip_special=*/true);
  if (stream) std::cout << (o.chat ? "" : o.prompts[0]) << std::flush;
  GenerateStats stats;
  auto outs = gen.run(
      reqs,
      [&](size_t, int32_t tok) {
        if (stream) std::cout << detok.feed(tok) << std::flush;
      },
      &stats);
  if (stream) std::cout << detok.flush() << "\n";
  if (!stream && !o.quiet) {
    for (size_t i = 0; i < outs.size(); ++i) {
      std::cout << "=== [" << i << "] " << o.prompts[i] << "\n"
                << bundle->tokenizer().decode(outs[i].tokens, /*skip_special=*/true) << "\n"
                << "--- finish_reason: " << generate_finish_name(outs[i].finish) << "\n";
    }
  }
  print_stats(stats, reqs.size());
  return 0;
}

}  // namespace

CLI::App* add_generate_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand("generate", "Generate text for one or more prompts (batched together)");
  auto o = std::make_shared<GenerateOptions>();
  add_model_options(*cmd, o->model);
  add_sampling_options(*cmd, o->sampling);
  cmd->add_option("-p,--prompt", o->prompts, "Prompt text (repeat for several prompts)")->required();
  cmd->add_flag("--chat", o->chat, "Wrap each prompt as a user turn with the model's chat template");
  cmd->add_option("--system", o->system, "System message (with --chat)");
  cmd->add_option("--max-batched-tokens", o->max_batched_tokens, "Tokens per forward step at most (prompt chunking)")
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "Print only the statistics");
  cmd->callback([cmd, o, &action] { action = [o] { return run_generate(*o); }; });
  return cmd;
}

}  // namespace db::cli

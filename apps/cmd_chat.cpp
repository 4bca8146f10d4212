// `deepbatch chat`: an interactive conversation on the terminal, rendered with
// the model's chat template, replies streamed token by token.
#include <iostream>
#include <string>

#include "cli_options.h"
#include "commands.h"
#include "runner/batch_generator.h"
#include "runner/model_bundle.h"
#include "tokenizer/detokenizer.h"
#include "util/error.h"

namespace db::cli {

namespace {

struct ChatOptions {
  ModelOptions model;
  SamplingOptions sampling;
  std::string system;
};

int run_chat(const ChatOptions& o) {
  auto bundle = ModelBundle::open(o.model.model);
  if (!bundle->has_chat_template()) throw db::Error(o.model.model + ": the model has no chat template");
  const SamplingParams params = to_sampling_params(o.sampling);
  ThreadPool pool(resolve_threads(o.model.threads));
  GeneratorOptions gopts;
  gopts.block_size = o.model.block_size;
  gopts.kv_dtype = parse_kv_dtype(o.model.kv_dtype);
  BatchGenerator gen(bundle->model(), bundle->tokenizer(), pool, gopts);

  std::vector<ChatMessage> history;
  if (!o.system.empty()) history.push_back({"system", o.system});
  std::cerr << "deepbatch chat: type a message; /reset clears the conversation, /exit (or end of input) quits.\n";
  std::string line;
  while (std::cout << "> " << std::flush, std::getline(std::cin, line)) {
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      history.resize(o.system.empty() ? 0 : 1);
      continue;
    }
    if (line.empty()) continue;
    history.push_back({"user", line});
    GenerateRequest req;
    req.prompt = bundle->encode_chat(history);
    req.sampling = params;
    req.max_new_tokens = o.sampling.max_tokens;
    req.ignore_eos = o.sampling.ignore_eos;
    IncrementalDetokenizer detok(bundle->tokenizer(), /*skip_special=*/true);
    std::string reply;
    auto outs = gen.run({req}, [&](size_t, int32_t tok) {
      std::string piece = detok.feed(tok);
      reply += piece;
      std::cout << piece << std::flush;
    });
    std::string tail = detok.flush();
    reply += tail;
    std::cout << tail << "\n";
    history.push_back({"assistant", reply});
  }
  return 0;
}

}  // namespace

CLI::App* add_chat_command(CLI::App& app, std::function<int()>& action) {
  auto* cmd = app.add_subcommand("chat", "Interactive chat on the terminal with the model's chat template");
  auto o = std::make_shared<ChatOptions>();
  o->sampling.max_tokens = 512;
  add_model_options(*cmd, o->model);
  add_sampling_options(*cmd, o->sampling);
  cmd->add_option("--system", o->system, "System message");
  cmd->callback([o, &action] { action = [o] { return run_chat(*o); }; });
  return cmd;
}

}  // namespace db::cli

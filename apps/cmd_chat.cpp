// `deepbatch chat`: an interactive conversation on the terminal, rendered with
// the model's chat template, replies streamed as the engine produces them. The
// engine lives for the whole conversation, so each turn's prompt finds the
// previous turns in the prefix cache and only the new tokens are computed; each
// turn reports how many prompt tokens were cached.
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include "bundle/model_bundle.h"
#include "chat/chat_message.h"
#include "cli_options.h"
#include "commands.h"
#include "engine/engine.h"
#include "engine_options.h"
#include "util/error.h"

namespace db::cli {

namespace {

struct ChatOptions {
  ModelOptions model;
  SamplingOptions sampling;
  EngineOptions engine;
  std::string system;
};

struct Reply {
  std::string text;
  FinishReason finish = FinishReason::None;
  std::string error;  // FinishReason::Error: what went wrong
  RequestStats stats;
};

// Runs one request to its end, writing its text to stdout as it arrives.
Reply stream_reply(Engine& engine, EngineRequest req) {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  Reply reply;
  engine.submit(std::move(req), [&](RequestId, const SampleOutput& out, const RequestStats& stats, bool final) {
    if (!out.new_text.empty()) {
      std::fwrite(out.new_text.data(), 1, out.new_text.size(), stdout);
      std::fflush(stdout);
    }
    std::lock_guard<std::mutex> lock(mu);
    reply.text += out.new_text;
    if (out.finish != FinishReason::None) reply.finish = out.finish;
    if (out.finish == FinishReason::Error || out.finish == FinishReason::QueueTimeout) {
      reply.finish = FinishReason::Error;  // no reply either way: the turn is dropped
      reply.error = out.stop_reason;
    }
    if (final) {
      reply.stats = stats;
      done = true;
      done_cv.notify_all();
    }
  });
  std::unique_lock<std::mutex> lock(mu);
  done_cv.wait(lock, [&] { return done; });
  return reply;
}

void print_turn_stats(int turn, const RequestStats& s) {
  const double decode_seconds = s.e2e_seconds - s.ttft_seconds;
  std::fprintf(stderr,
               "[deepbatch] turn %d: prompt %d tokens (%d cached, %d computed), first token after %.3f s, "
               "generated %d tokens (%.1f tok/s)\n",
               turn, s.prompt_tokens, s.cached_prompt_tokens, s.prompt_tokens - s.cached_prompt_tokens, s.ttft_seconds,
               s.generated_tokens,
               s.generated_tokens > 1 && decode_seconds > 0 ? (s.generated_tokens - 1) / decode_seconds : 0.0);
}

int run_chat(const ChatOptions& o) {
  auto bundle = ModelBundle::open(o.model.model, o.model.threads, load_options(o.model));
  if (!bundle->has_chat_template()) throw db::Error(o.model.model + ": the model has no chat template");
  const SamplingParams params = to_sampling_params(o.sampling);
  Engine engine(*bundle, make_engine_config(o.model, o.engine));
  std::fprintf(stderr, "[deepbatch] %s\n", engine.kv_cache_summary().c_str());

  std::vector<ChatMessage> history;
  if (!o.system.empty()) history.push_back({"system", o.system});
  std::cerr << "deepbatch chat: type a message; /reset clears the conversation, /exit (or end of input) quits.\n";
  std::string line;
  int turn = 0;
  while (std::cout << "> " << std::flush, std::getline(std::cin, line)) {
    if (line == "/exit" || line == "/quit") break;
    if (line == "/reset") {
      history.resize(o.system.empty() ? 0 : 1);
      turn = 0;
      continue;
    }
    if (line.empty()) continue;
    history.push_back({"user", line});
    EngineRequest req;
    req.sampling = params;
    req.max_tokens = o.sampling.max_tokens;
    req.ignore_eos = o.sampling.ignore_eos;
    req.priority = static_cast<int>(Priority::Interactive);
    Reply reply;
    try {
      req.prompt = bundle->encode_chat(history);
      reply = stream_reply(engine, std::move(req));
    } catch (const Error& e) {  // e.g. the conversation no longer fits the context
      reply.finish = FinishReason::Error;
      reply.error = e.what();
    }
    std::cout << "\n" << std::flush;
    if (reply.finish == FinishReason::Error) {
      history.pop_back();
      std::fprintf(stderr, "deepbatch chat: no reply: %s (/reset starts over)\n", reply.error.c_str());
      continue;
    }
    history.push_back({"assistant", reply.text});
    print_turn_stats(++turn, reply.stats);
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
  add_engine_options(*cmd, o->engine, /*with_max_num_seqs=*/false);
  cmd->add_option("--system", o->system, "System message");
  cmd->callback([o, &action] { action = [o] { return run_chat(*o); }; });
  return cmd;
}

}  // namespace db::cli

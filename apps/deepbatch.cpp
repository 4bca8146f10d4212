// deepbatch: command-line entry point. Subcommands live in cmd_*.cpp.
#include <cstdio>
#include <exception>

#include "commands.h"
#include "util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"deepbatch: high-throughput batch inference for DeepSeek-family language models"};
  app.require_subcommand(1);
  std::function<int()> action;
  db::cli::add_generate_command(app, action);
  db::cli::add_chat_command(app, action);
  db::cli::add_run_command(app, action);
  db::cli::add_serve_command(app, action);
  db::cli::add_bench_command(app, action);
  db::cli::add_loadtest_command(app, action);
  db::cli::add_convert_command(app, action);
  CLI11_PARSE(app, argc, argv);
  try {
    return action ? action() : 0;
  } catch (const db::Error& e) {
    std::fprintf(stderr, "deepbatch: error: %s\n", e.what());
    return 1;
  } catch (const CLI::Error& e) {  // an option checked once the options are read together
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepbatch: unexpected error: %s\n", e.what());
    return 2;
  }
}

// deepbatch: command-line entry point. Subcommands live in cmd_*.cpp.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "commands.h"
#include "numa_option.h"
#include "util/error.h"

int main(int argc, char** argv) {
  CLI::App app{"deepbatch: high-throughput batch inference for DeepSeek-family language models"};
  app.require_subcommand(1);
  std::function<int()> action;
  std::string numa = "auto";
  const std::vector<CLI::App*> runs_model = {
      db::cli::add_generate_command(app, action), db::cli::add_chat_command(app, action),
      db::cli::add_run_command(app, action), db::cli::add_serve_command(app, action),
      db::cli::add_bench_command(app, action)};
  for (CLI::App* command : runs_model) db::cli::add_numa_option(*command, numa);
  db::cli::add_loadtest_command(app, action);
  db::cli::add_convert_command(app, action);
  CLI11_PARSE(app, argc, argv);
  try {
    if (!action) return 0;
    for (const CLI::App* command : runs_model)
      if (command->parsed()) db::cli::place_process(numa);  // before anything loads or starts a thread
    return action();
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

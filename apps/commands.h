// Each subcommand registers its options on the CLI and, when chosen, sets
// `action` to the function that runs it (called after parsing).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

namespace db::cli {

CLI::App* add_generate_command(CLI::App& app, std::function<int()>& action);
CLI::App* add_chat_command(CLI::App& app, std::function<int()>& action);
CLI::App* add_run_command(CLI::App& app, std::function<int()>& action);
CLI::App* add_serve_command(CLI::App& app, std::function<int()>& action);
CLI::App* add_bench_command(CLI::App& app, std::function<int()>& action);
CLI::App* add_loadtest_command(CLI::App& app, std::function<int()>& action);
CLI::App* add_convert_command(CLI::App& app, std::function<int()>& action);

}  // namespace db::cli

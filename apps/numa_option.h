// --numa: where the process's threads run and its memory goes on a multi-node
// machine (dist/numa_placement.h states the rules). The placement is made once,
// after the command line is read and before the command loads anything or
// starts a thread, so the model's pages, the KV cache and every worker thread
// follow it.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace db::cli {

// Adds --numa to a command that runs a model; `mode` holds its value ("auto").
void add_numa_option(CLI::App& command, std::string& mode);

// Places this process by `mode`; says what it did on stderr when the machine has
// more than one node with usable CPUs or the mode is not auto. Throws db::Error
// when the mode is unknown, does not fit the launch, or the kernel refuses it.
void place_process(const std::string& mode);

}  // namespace db::cli

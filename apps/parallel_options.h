// Command-line options that split one model across the ranks of an mpirun job:
// --tensor-parallel-size, --expert-parallel-size and --collective-timeout.
#pragma once
#include <CLI/CLI.hpp>

#include "dist/parallel_config.h"

namespace db::cli {

void add_parallel_options(CLI::App& app, dist::ParallelConfig& p);

// Throws db::Error when the sizes do not fit this build (no MPI) or the launched
// world (mpirun -np), or ask for expert or tensor parallelism in a command that does not run a split model (`runs_split_model`
// false: only run, serve and bench do).
void check_parallel_options(const dist::ParallelConfig& p, bool runs_split_model = false);

}  // namespace db::cli

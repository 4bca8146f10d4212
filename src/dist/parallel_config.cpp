#include "dist/parallel_config.h"

#include <cmath>
#include <string>

namespace db::dist {

namespace {

std::string sizes_text(const ParallelConfig& p) {
  return "--tensor-parallel-size " + std::to_string(p.tensor_parallel_size) + " x --expert-parallel-size " +
         std::to_string(p.expert_parallel_size);
}

}  // namespace

void check_parallel_config(const ParallelConfig& p, int world_size, bool with_mpi) {
  if (p.tensor_parallel_size < 1)
    throw Error("--tensor-parallel-size must be at least 1, got " + std::to_string(p.tensor_parallel_size));
  if (p.expert_parallel_size < 1)
    throw Error("--expert-parallel-size must be at least 1, got " + std::to_string(p.expert_parallel_size));
  if (!(p.collective_timeout_s > 0) || !std::isfinite(p.collective_timeout_s))
    throw Error("--collective-timeout must be a positive number of seconds, got " +
                std::to_string(p.collective_timeout_s));
  if (p.ranks() > 1 && !with_mpi)
    throw Error(sizes_text(p) + " asks for " + std::to_string(p.ranks()) +
                " processes, but this build of deepbatch has no MPI (it was configured with DB_MPI=OFF or without "
                "Open MPI's development files): install libopenmpi-dev and rebuild, then launch with mpirun -np " +
                std::to_string(p.ranks()));
  if (p.ranks() != world_size)
    throw Error(sizes_text(p) + " = " + std::to_string(p.ranks()) + (p.ranks() == 1 ? " rank" : " ranks") +
                ", but the job has " +
                std::to_string(world_size) + (world_size == 1 ? " process" : " processes") +
                ": launch it with mpirun -np " + std::to_string(p.ranks()) +
                (p.ranks() == 1 ? " (or without mpirun)" : "") + ", or set the sizes to match");
}

}  // namespace db::dist

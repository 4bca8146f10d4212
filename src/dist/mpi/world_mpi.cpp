// The world of a build with MPI: MPI's when launched as several processes.
#include <string>

#include "dist/local_communicator.h"
#include "dist/mpi/mpi_communicator.h"
#include "dist/world.h"

namespace db::dist {

bool built_with_mpi() { return true; }

std::unique_ptr<Communicator> open_world(const WorldOptions& options) {
  const int n = launched_world_size();
  if (n <= 1) return std::make_unique<LocalCommunicator>();
  auto world = MpiCommunicator::open_world(options.collective_timeout_s);
  if (world->size() != n)
    throw Error("the launcher set " + std::to_string(n) + " processes, but MPI's world has " +
                std::to_string(world->size()));
  return world;
}

}  // namespace db::dist

// The world of a build without MPI: one process only.
#include <string>

#include "dist/local_communicator.h"
#include "dist/world.h"

namespace db::dist {

bool built_with_mpi() { return false; }

std::unique_ptr<Communicator> open_world(const WorldOptions&) {
  const int n = launched_world_size();
  if (n > 1)
    throw Error("launched as " + std::to_string(n) +
                " processes, but this build of deepbatch has no MPI (it was configured with DB_MPI=OFF or "
                "without Open MPI's development files): install libopenmpi-dev and rebuild, or run one process");
  return std::make_unique<LocalCommunicator>();
}

}  // namespace db::dist

// How a process finds the group it belongs to. A job is launched either as one
// process (`deepbatch run ...`) or as N ranks by an MPI launcher
// (`mpirun -np N deepbatch run ...`); the launcher's environment says which, before
// anything is initialised.
#pragma once
#include <memory>

#include "dist/communicator.h"

namespace db::dist {

struct WorldOptions {
  double collective_timeout_s = kDefaultCollectiveTimeoutSeconds;  // per collective; > 0
};

// Whether this build can run one model across processes (it was built with MPI).
bool built_with_mpi();

// The number of processes the launcher started for this job, from its environment
// (Open MPI's OMPI_COMM_WORLD_SIZE, else PMI_SIZE): 1 when none was set. Reads no MPI
// state, so a single process never initialises MPI.
int launched_world_size();

// The communicator of every process of the job. Launched as one process: a
// LocalCommunicator (MPI is not initialised). Launched as several: MPI's world,
// initialised here (once per process; finalised when the communicator is destroyed).
// Throws db::Error in a build without MPI launched as several processes, or when
// called twice with MPI.
std::unique_ptr<Communicator> open_world(const WorldOptions& options);

}  // namespace db::dist

// How one model is split across the ranks of a job: the command-line sizes, checked
// against the build and the launched world before anything is loaded.
#pragma once
#include <string>

#include "dist/world.h"

namespace db::dist {

struct ParallelConfig {
  int tensor_parallel_size = 1;  // ranks that split each layer's heads and MLP columns
  int expert_parallel_size = 1;  // ranks that split the routed experts
  double collective_timeout_s = kDefaultCollectiveTimeoutSeconds;  // per collective, seconds
  std::string tensor_parallel_join = "gather";  // gather | reduce (dist/shard_plan.h ShardJoin)

  int ranks() const { return tensor_parallel_size * expert_parallel_size; }
};

// Throws db::Error naming the option when the sizes are not positive, the timeout is
// not positive, the sizes ask for several ranks in a build without MPI, or their
// product differs from `world_size` (the processes the launcher started).
void check_parallel_config(const ParallelConfig& p, int world_size, bool with_mpi);

}  // namespace db::dist

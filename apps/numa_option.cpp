#include "numa_option.h"

#include <sched.h>

#include <cstdio>

#include "dist/numa_apply.h"
#include "dist/numa_placement.h"
#include "dist/numa_topology.h"

namespace db::cli {

void add_numa_option(CLI::App& command, std::string& mode) {
  command.add_option("--numa", mode,
                     "NUMA placement: auto (under mpirun, each local rank on its own node: its CPUs and, preferred, its "
                     "memory; one process: unchanged), interleave (one process: memory spread over the nodes), "
                     "isolate (one process: threads and memory on the node it started on), replicate (one process: "
                     "a copy of the weights on each node, each thread pinned to one node and reading its copy) or off")
      ->check(CLI::IsMember({"auto", "off", "interleave", "isolate", "replicate"}))
      ->capture_default_str();
}

void place_process(const std::string& mode_name) {
  const dist::NumaMode mode = dist::numa_mode_from_name(mode_name);
  const std::vector<int> allowed = dist::allowed_cpus();
  const dist::NumaTopology topology = dist::read_numa_topology(allowed);
  const dist::NumaPlacement placement =
      dist::plan_numa_placement(topology, allowed, mode, dist::launched_local_rank(), sched_getcpu());
  dist::apply_numa_placement(placement);
  if (placement.changes_anything() || mode != dist::NumaMode::Auto || topology.nodes.size() > 1)
    std::fprintf(stderr, "deepbatch: %s\n", placement.description.c_str());
}

}  // namespace db::cli

// Carries out a NumaPlacement for the calling thread; threads it creates
// afterwards inherit both settings, so call it first thing, before the model
// loads and before any thread pool starts.
#pragma once
#include "dist/numa_placement.h"

namespace db::dist {

// The CPUs become the calling thread's affinity; the memory policy its default
// policy (set_mempolicy), which governs the anonymous memory it and its later
// threads touch and the model file's pages read into the page cache from then
// on (pages already cached stay on whichever node holds them). Throws db::Error
// with the system's reason when the kernel refuses either. Replicate's node
// layout is installed (util/numa_nodes.h): pools started afterwards spread their
// workers over its nodes, and the calling thread is pinned to the first.
void apply_numa_placement(const NumaPlacement& placement);

// The calling thread's memory policy as set_mempolicy left it, and its nodes:
// for checks and the start-up log. A policy this module never sets (bind,
// local) reads as Default.
struct AppliedMemoryPolicy {
  MemoryPolicy policy = MemoryPolicy::Default;
  std::vector<int> nodes;
};
AppliedMemoryPolicy current_memory_policy();

}  // namespace db::dist

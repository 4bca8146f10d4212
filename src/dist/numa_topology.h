// The machine's NUMA nodes as Linux describes them (sysfs), and the CPUs this
// process may run on. Read once at start-up to place threads and memory
// (numa_placement.h); nothing here changes the process.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace db::dist {

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;      // ascending; empty for a memory-only node
  uint64_t memory_bytes = 0;  // MemTotal of the node; 0 when not reported
};

struct NumaTopology {
  std::vector<NumaNode> nodes;  // ascending id

  // The node holding `cpu`, or nullptr.
  const NumaNode* node_of_cpu(int cpu) const;
};

// Nodes from `root`/nodeN/{cpulist,meminfo} (default /sys/devices/system/node).
// A kernel without NUMA support has no such directory: then one node 0 holding
// `fallback_cpus`. Throws db::Error when a cpulist cannot be read or parsed.
NumaTopology read_numa_topology(const std::vector<int>& fallback_cpus,
                                const std::string& root = "/sys/devices/system/node");

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}, ascending, no repeats; "" or "\n" -> {}.
// Throws db::Error naming the text when it is not such a list.
std::vector<int> parse_cpu_list(const std::string& text);

// The CPUs this process may run on (sched_getaffinity: taskset, cpusets), ascending.
std::vector<int> allowed_cpus();

}  // namespace db::dist

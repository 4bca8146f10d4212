#include "dist/numa_placement.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "util/error.h"

namespace db::dist {

NumaMode numa_mode_from_name(const std::string& name) {
  if (name == "auto") return NumaMode::Auto;
  if (name == "off") return NumaMode::Off;
  if (name == "interleave") return NumaMode::Interleave;
  if (name == "isolate") return NumaMode::Isolate;
  if (name == "replicate") return NumaMode::Replicate;
  throw Error("--numa must be auto, off, interleave, isolate or replicate, got '" + name + "'");
}

namespace {

// The value of the first of `names` that is set, or -1.
int env_int(const char* const* names, int n_names, const char** which) {
  for (int i = 0; i < n_names; ++i) {
    const char* v = std::getenv(names[i]);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long x = std::strtol(v, &end, 10);
    if (*end != '\0' || x < 0 || x > 1 << 20) throw Error(std::string(names[i]) + "=" + v + ": not a process number");
    *which = names[i];
    return static_cast<int>(x);
  }
  return -1;
}

// A node with the CPUs of it this process may use.
struct UsableNode {
  int id;
  std::vector<int> cpus;
};

std::vector<UsableNode> usable_nodes(const NumaTopology& topology, const std::vector<int>& allowed) {
  std::vector<UsableNode> out;
  for (const NumaNode& n : topology.nodes) {
    UsableNode u{n.id, {}};
    std::set_intersection(n.cpus.begin(), n.cpus.end(), allowed.begin(), allowed.end(), std::back_inserter(u.cpus));
    if (!u.cpus.empty()) out.push_back(std::move(u));
  }
  return out;
}

std::string cpu_text(const std::vector<int>& cpus) {
  std::string s;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(cpus[i]);
    if (j > i) s.append("-").append(std::to_string(cpus[j]));
    i = j + 1;
  }
  return s;
}

// Part `index` of `parts` contiguous, near-equal parts of cpus; with more parts
// than CPUs, parts share: part i gets CPU i mod count.
std::vector<int> cpu_share(const std::vector<int>& cpus, int index, int parts) {
  const auto n = static_cast<int>(cpus.size());
  if (parts > n) return {cpus[static_cast<size_t>(index % n)]};
  const int b = index * n / parts, e = (index + 1) * n / parts;
  return {cpus.begin() + b, cpus.begin() + e};
}

const char* mode_name(NumaMode mode) {
  switch (mode) {
    case NumaMode::Auto: return "auto";
    case NumaMode::Off: return "off";
    case NumaMode::Interleave: return "interleave";
    case NumaMode::Isolate: return "isolate";
    case NumaMode::Replicate: return "replicate";
  }
  return "?";
}

}  // namespace

LocalRank launched_local_rank() {
  static const char* const kRank[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"};
  static const char* const kSize[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
  const char *rank_name = "", *size_name = "";
  const int rank = env_int(kRank, 2, &rank_name), size = env_int(kSize, 2, &size_name);
  if (rank < 0 && size < 0) return {};
  if (rank < 0 || size < 1 || rank >= size)
    throw Error(std::string("the launcher's local rank ") + rank_name + "=" + std::to_string(rank) + " and size " +
                size_name + "=" + std::to_string(size) + " do not fit together");
  return {rank, size};
}

NumaPlacement plan_numa_placement(const NumaTopology& topology, const std::vector<int>& allowed, NumaMode mode,
                                  LocalRank local, int current_cpu) {
  NumaPlacement p;
  if (mode == NumaMode::Off) {
    p.description = "NUMA: --numa off, threads and memory left to the OS";
    return p;
  }
  if (local.size > 1 && mode != NumaMode::Auto)
    throw Error(std::string("--numa ") + mode_name(mode) + " places one process; this is one of " +
                std::to_string(local.size) +
                " processes of the job on this machine, each placed on its own node by --numa auto");
  const std::vector<UsableNode> nodes = usable_nodes(topology, allowed);
  if (nodes.empty()) throw Error("NUMA: no node holds any of the CPUs this process may use (" + cpu_text(allowed) + ")");
  const auto n_nodes = static_cast<int>(nodes.size());
  if (n_nodes == 1) {
    p.description = mode == NumaMode::Replicate
                        ? "NUMA: --numa replicate on one node with usable CPUs: one copy of the weights, the same as "
                          "--numa off"
                        : "NUMA: one node with usable CPUs, nothing to place";
    return p;
  }
  const std::string of_nodes = " of " + std::to_string(n_nodes) + " nodes";
  switch (mode) {
    case NumaMode::Auto: {
      if (local.size == 1) {
        p.description = "NUMA: " + std::to_string(n_nodes) +
                        " nodes, one process: memory stays where it is first touched (--numa interleave spreads it, "
                        "--numa replicate copies the weights to each node; one rank per node under mpirun places "
                        "each)";
        return p;
      }
      const int node = local.rank * n_nodes / local.size;
      int first = 0;  // the first local rank on `node`, and how many share it
      while (first * n_nodes / local.size < node) ++first;
      int sharing = 0;
      while (first + sharing < local.size && (first + sharing) * n_nodes / local.size == node) ++sharing;
      const UsableNode& u = nodes[static_cast<size_t>(node)];
      p.cpus = cpu_share(u.cpus, local.rank - first, sharing);
      p.memory = MemoryPolicy::Preferred;
      p.memory_nodes = {u.id};
      p.description = "NUMA: local rank " + std::to_string(local.rank) + " of " + std::to_string(local.size) +
                      " on node " + std::to_string(u.id) + of_nodes + ", CPUs " + cpu_text(p.cpus) +
                      ", memory preferred there";
      return p;
    }
    case NumaMode::Interleave:
      p.memory = MemoryPolicy::Interleave;
      for (const UsableNode& u : nodes) p.memory_nodes.push_back(u.id);
      p.description = "NUMA: memory interleaved over nodes " + cpu_text(p.memory_nodes) + ", threads on CPUs " +
                      cpu_text(allowed);
      return p;
    case NumaMode::Isolate: {
      const NumaNode* here = topology.node_of_cpu(current_cpu);
      const UsableNode* u = &nodes.front();
      for (const UsableNode& n : nodes)
        if (here != nullptr && n.id == here->id) u = &n;
      p.cpus = u->cpus;
      p.memory = MemoryPolicy::Preferred;
      p.memory_nodes = {u->id};
      p.description = "NUMA: isolated on node " + std::to_string(u->id) + of_nodes + ", CPUs " + cpu_text(p.cpus) +
                      ", memory preferred there";
      return p;
    }
    case NumaMode::Replicate: {
      std::vector<int> ids;
      for (const UsableNode& u : nodes) {
        p.replicas.push_back({u.id, u.cpus});
        ids.push_back(u.id);
      }
      p.description = "NUMA: --numa replicate: a copy of the weights on each of nodes " + cpu_text(ids) +
                      ", thread pool workers spread over them (CPUs " + cpu_text(allowed) +
                      "), this thread on node " + std::to_string(ids.front()) + "; the KV cache is not replicated";
      return p;
    }
    case NumaMode::Off:
      break;
  }
  return p;
}

}  // namespace db::dist

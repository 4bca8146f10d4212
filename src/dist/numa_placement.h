// Where a process's threads run and where its memory goes on a multi-node
// (NUMA) machine. A pure decision from the topology, the CPUs the process may
// use and its place among the job's processes on this machine, so every rule is
// unit-tested on synthetic topologies; numa_apply.h carries it out.
//
// The rules (`--numa`):
//  - auto (default), several processes of one job on this machine (mpirun with
//    one rank per node): the k-th of n local ranks takes node k * U / n of the U
//    nodes that have CPUs it may use, those CPUs (shared out in contiguous parts
//    when several ranks land on one node) and that node's memory, preferred:
//    a rank whose share outgrows its node spills to the others instead of
//    being killed, as it would be under a strict bind.
//  - auto, one process: nothing changes (memory lands where it is first
//    touched); the start-up line says how to do better on a multi-node machine.
//  - interleave (one process): memory pages spread round-robin over the nodes
//    with usable CPUs, so every thread sees the machine's whole bandwidth on
//    average instead of one node's; threads stay on every allowed CPU.
//  - isolate (one process): threads and memory (preferred) on the node the
//    process started on.
//  - replicate (one process): a copy of the weights the matmuls read on every
//    node with usable CPUs, the thread pools' workers spread over those nodes
//    (pinned one node each), each reading its own node's copy
//    (kernels/weight_replicas.h); the calling thread is pinned to the first
//    node, whose copy is the original. Memory otherwise as auto (first touch).
//  - off: nothing changes.
// On a machine with one usable node every mode changes nothing (the start-up
// line says so for replicate).
#pragma once
#include <string>
#include <vector>

#include "dist/numa_topology.h"
#include "util/numa_nodes.h"

namespace db::dist {

enum class NumaMode { Auto, Off, Interleave, Isolate, Replicate };

// "auto", "off", "interleave", "isolate", "replicate"; throws db::Error naming the choices.
NumaMode numa_mode_from_name(const std::string& name);

// This process among the job's processes on this machine.
struct LocalRank {
  int rank = 0;
  int size = 1;
};

// From the launcher's environment: Open MPI's OMPI_COMM_WORLD_LOCAL_RANK /
// OMPI_COMM_WORLD_LOCAL_SIZE, else MPICH's MPI_LOCALRANKID / MPI_LOCALNRANKS,
// else {0, 1}. Throws db::Error when a value is not a number or rank >= size.
LocalRank launched_local_rank();

enum class MemoryPolicy { Default, Preferred, Interleave };

struct NumaPlacement {
  std::vector<int> cpus;  // the CPUs the process's threads may run on; empty: unchanged
  MemoryPolicy memory = MemoryPolicy::Default;
  std::vector<int> memory_nodes;  // Preferred: one node; Interleave: two or more
  std::vector<NodeCpus> replicas;  // replicate: the node layout (util/numa_nodes.h), two or more nodes
  std::string description;        // one line for the start-up log

  bool changes_anything() const { return !cpus.empty() || memory != MemoryPolicy::Default || !replicas.empty(); }
};

// The placement for `mode`. allowed: the CPUs the process may use (ascending);
// current_cpu: the CPU it runs on now (isolate's node). Throws db::Error for
// interleave, isolate or replicate asked of one of several local processes (each is then
// placed on its own node by auto), and when no node holds an allowed CPU.
NumaPlacement plan_numa_placement(const NumaTopology& topology, const std::vector<int>& allowed, NumaMode mode,
                                  LocalRank local, int current_cpu);

}  // namespace db::dist

// The NUMA nodes a process spreads its thread pools over under --numa replicate
// (dist/numa_placement.h decides them), and the calls that place a thread or a
// range of memory on one of them: raw system calls, no library.
//
// Node slots: the installed layout lists the nodes in order, slot 0 first. A
// ThreadPool's worker `tid` of n threads pins itself when it starts to the CPUs
// of slot node_slot_of_thread(tid, n, U) of the U slots (near-equal contiguous
// blocks of threads per node, tid 0, the pool's caller, on slot 0). The thread
// that installs the layout is pinned to slot 0; the threads it starts later
// inherit that affinity and, like every thread that pin_to_node_slot has not
// placed, count as slot 0. A thread's slot says whose copy of the replicated
// weights it reads (kernels/weight_replicas.h).
#pragma once
#include <cstddef>
#include <vector>

namespace db {

struct NodeCpus {
  int memory_node = 0;    // the node whose memory backs this slot's copy
  std::vector<int> cpus;  // the CPUs of that node the process may use, ascending
};

// Installs `slots` (two or more; fewer clears the layout) and pins the calling
// thread to slot 0. Call it before any pool starts: pools started earlier keep
// their threads where they are. Throws db::Error when a slot has no CPU or the
// kernel refuses the affinity.
void install_node_layout(std::vector<NodeCpus> slots);
// The installed slots; empty when there is no layout.
std::vector<NodeCpus> node_layout();
// The CPUs of every slot together: the thread count 0 stands for (resolve_threads),
// since the installing thread itself is pinned to slot 0's. 0 without a layout.
int node_layout_cpu_count();

// The slot of pool thread `tid` of `n_threads` over `n_slots` slots: tid * n_slots / n_threads.
int node_slot_of_thread(int tid, int n_threads, int n_slots);
// Pins the calling thread to the CPUs of `slot` of the layout and makes it read
// that slot's copies. Throws db::Error for a slot the layout lacks, or with the
// system's reason when the kernel refuses the affinity.
void pin_to_node_slot(int slot);
// The calling thread's slot: 0 unless pin_to_node_slot placed it elsewhere.
int this_thread_node_slot();

// The CPUs the calling thread may run on (sched_getaffinity: taskset, cpusets,
// a placement), ascending. Throws db::Error with the system's reason.
std::vector<int> this_thread_cpus();
// Makes `cpus` the calling thread's affinity; threads it starts later inherit
// it. Throws db::Error for a CPU number out of range, or with the system's
// reason when the kernel refuses.
void pin_to_cpus(const std::vector<int>& cpus);

// Sets the memory policy of the whole pages around [p, p + bytes) to `node`,
// preferred (a node that runs out spills to the others instead of the process
// being killed): pages touched afterwards are allocated there. With `migrate`,
// pages already present are moved there too, as far as the kernel can (pages
// shared with other processes stay). Returns false, errno set, when the kernel
// refuses.
bool prefer_memory_node(const void* p, size_t bytes, int node, bool migrate);

}  // namespace db

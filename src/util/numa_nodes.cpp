#include "util/numa_nodes.h"

#include <linux/mempolicy.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

#include "util/error.h"

namespace db {

namespace {

std::mutex layout_mu;
std::vector<NodeCpus> layout;  // guarded by layout_mu
thread_local int thread_slot = 0;

constexpr int kMaxNodes = 1024;
constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);

}  // namespace

std::vector<int> this_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    throw Error(std::string("sched_getaffinity: ") + std::strerror(errno));
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

void pin_to_cpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) throw Error("cannot run on CPU " + std::to_string(c) + ": no such CPU number");
    CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    throw Error(std::string("sched_setaffinity: ") + std::strerror(errno));
}

void install_node_layout(std::vector<NodeCpus> slots) {
  if (slots.size() < 2) slots.clear();
  for (const NodeCpus& s : slots)
    if (s.cpus.empty()) throw Error("NUMA node layout: node " + std::to_string(s.memory_node) + " has no CPU");
  {
    std::lock_guard<std::mutex> lock(layout_mu);
    layout = std::move(slots);
  }
  thread_slot = 0;
  if (!node_layout().empty()) pin_to_node_slot(0);
}

std::vector<NodeCpus> node_layout() {
  std::lock_guard<std::mutex> lock(layout_mu);
  return layout;
}

int node_layout_cpu_count() {
  std::lock_guard<std::mutex> lock(layout_mu);
  size_t n = 0;
  for (const NodeCpus& s : layout) n += s.cpus.size();
  return static_cast<int>(n);
}

int node_slot_of_thread(int tid, int n_threads, int n_slots) {
  return static_cast<int>(int64_t{tid} * n_slots / n_threads);
}

void pin_to_node_slot(int slot) {
  const std::vector<NodeCpus> slots = node_layout();
  if (slot < 0 || static_cast<size_t>(slot) >= slots.size())
    throw Error("NUMA node layout has no slot " + std::to_string(slot) + " (it has " + std::to_string(slots.size()) +
                ")");
  pin_to_cpus(slots[static_cast<size_t>(slot)].cpus);
  thread_slot = slot;
}

int this_thread_node_slot() { return thread_slot; }

bool prefer_memory_node(const void* p, size_t bytes, int node, bool migrate) {
  if (node < 0 || node >= kMaxNodes) {
    errno = EINVAL;
    return false;
  }
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + bytes + page - 1) / page * page;
  if (end == begin) return true;
  unsigned long mask[kMaxNodes / kBitsPerWord] = {};
  mask[static_cast<size_t>(node) / kBitsPerWord] = 1UL << (static_cast<size_t>(node) % kBitsPerWord);
  const unsigned flags = migrate ? MPOL_MF_MOVE : 0;
  return syscall(SYS_mbind, begin, end - begin, MPOL_PREFERRED, mask, static_cast<unsigned long>(kMaxNodes) + 1,
                 flags) == 0;
}

}  // namespace db

#include "dist/numa_apply.h"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "util/error.h"
#include "util/numa_nodes.h"

namespace db::dist {

namespace {

constexpr int kMaxNodes = 1024;
constexpr size_t kMaskWords = kMaxNodes / (8 * sizeof(unsigned long));

std::string sys_reason(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

}  // namespace

void apply_numa_placement(const NumaPlacement& p) {
  if (!p.cpus.empty()) {
    try {
      pin_to_cpus(p.cpus);
    } catch (const Error& e) {
      throw Error(std::string("NUMA placement: ") + e.what());
    }
  }
  if (!p.replicas.empty()) install_node_layout(p.replicas);
  if (p.memory == MemoryPolicy::Default) return;
  unsigned long mask[kMaskWords] = {};
  for (int n : p.memory_nodes) {
    if (n < 0 || n >= kMaxNodes) throw Error("NUMA placement names node " + std::to_string(n));
    mask[static_cast<size_t>(n) / (8 * sizeof(unsigned long))] |= 1UL << (n % (8 * sizeof(unsigned long)));
  }
  const int mode = p.memory == MemoryPolicy::Preferred ? MPOL_PREFERRED : MPOL_INTERLEAVE;
  if (syscall(SYS_set_mempolicy, mode, mask, static_cast<unsigned long>(kMaxNodes) + 1) != 0)
    throw Error("NUMA placement: " + sys_reason("set_mempolicy"));
}

AppliedMemoryPolicy current_memory_policy() {
  int mode = 0;
  unsigned long mask[kMaskWords] = {};
  if (syscall(SYS_get_mempolicy, &mode, mask, static_cast<unsigned long>(kMaxNodes) + 1, nullptr, 0UL) != 0)
    throw Error(sys_reason("get_mempolicy"));
  AppliedMemoryPolicy out;
  out.policy = mode == MPOL_PREFERRED    ? MemoryPolicy::Preferred
               : mode == MPOL_INTERLEAVE ? MemoryPolicy::Interleave
                                         : MemoryPolicy::Default;
  for (int n = 0; n < kMaxNodes; ++n)
    if (mask[static_cast<size_t>(n) / (8 * sizeof(unsigned long))] >> (n % (8 * sizeof(unsigned long))) & 1UL)
      out.nodes.push_back(n);
  return out;
}

}  // namespace db::dist

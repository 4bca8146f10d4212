// One observation of the process's memory, for the memory guard (memory_guard.h).
//
//   usage = the binding cgroup's usage (v2 memory.current, v1 memory.usage_in_bytes)
//           less the file cache the kernel drops first at no cost: inactive file
//           pages beyond the mapped ones (memory.stat inactive_file - file_mapped,
//           v1 total_inactive_file - total_mapped_file). Mapped file pages (the
//           model, when mmapped) stay counted: reclaiming them only faults them
//           back in. Without a cgroup limit: the process RSS.
//   limit = the binding cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes)
//
// The binding cgroup is the one with the least headroom (limit - usage) among
// the process's own memory cgroup and its ancestors, v1 or v2 (see
// cgroup_memory.h): the first whose limit the process would hit.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace db {

struct MemoryReading {
  double time_s = 0;                      // steady-clock seconds
  int64_t usage_bytes = 0;                // see above
  std::optional<int64_t> limit_bytes;     // nullopt: no limit known
  int64_t rss_bytes = 0;                  // the process's resident set
  std::optional<double> pressure_avg10;   // v2 memory.pressure "some avg10" (percent), where present
};

// What a reading is made from: the texts of /proc/self/cgroup, /proc/self/mountinfo
// and /proc/self/statm. The cgroup files themselves are read from the directories
// these name, so tests can point them at a fake tree.
struct ProcessMemorySources {
  std::string proc_cgroup;
  std::string mountinfo;
  std::string statm;
  int64_t page_size = 4096;
};

// The reading these sources describe. Never throws; fields it cannot read stay empty.
MemoryReading reading_from(const ProcessMemorySources& src, double time_s);

// Reads the process's memory now from /proc/self. Never throws.
MemoryReading read_process_memory(double time_s);

// Pieces of the reading, exposed for tests.
// Resident pages (statm's second field) times page_size; 0 when unreadable.
int64_t parse_statm_rss(const std::string& statm, int64_t page_size);
// "some avg10=" of a memory.pressure text; nullopt when absent.
std::optional<double> parse_pressure_some_avg10(const std::string& text);
// The value of `key` in a memory.stat text ("key value" lines); nullopt when absent.
std::optional<int64_t> parse_memory_stat(const std::string& text, const std::string& key);

}  // namespace db

#include "memory/memory_reading.h"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <vector>

#include "memory/cgroup_memory.h"

namespace db {

namespace {

// One limited cgroup directory: its limit and working set.
struct Level {
  int64_t limit = 0;
  int64_t usage = 0;
  const CgroupDir* dir = nullptr;
};

std::optional<Level> read_level(const CgroupDir& dir) {
  const bool v2 = dir.version == CgroupVersion::V2;
  const std::optional<CgroupUsage> u = read_cgroup_usage(dir);
  if (!u) return std::nullopt;
  const int64_t raw = u->usage;
  // v1's memory.stat has both the level's own counters and hierarchical totals; the
  // usage counts the whole subtree, so the totals are the ones to use.
  const std::string stat = read_text_file(dir.path + "/memory.stat");
  const int64_t inactive_file =
      (v2 ? parse_memory_stat(stat, "inactive_file") : parse_memory_stat(stat, "total_inactive_file")).value_or(0);
  const int64_t mapped_file =
      (v2 ? parse_memory_stat(stat, "file_mapped") : parse_memory_stat(stat, "total_mapped_file")).value_or(0);
  return Level{u->limit, raw - std::clamp<int64_t>(inactive_file - mapped_file, 0, raw), &dir};
}

}  // namespace

int64_t parse_statm_rss(const std::string& statm, int64_t page_size) {
  std::istringstream in(statm);
  long long size = 0, resident = 0;
  if (!(in >> size >> resident) || resident < 0) return 0;
  return static_cast<int64_t>(resident) * page_size;
}

std::optional<double> parse_pressure_some_avg10(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("some ", 0) != 0) continue;
    const size_t at = line.find("avg10=");
    if (at == std::string::npos) return std::nullopt;
    try {
      return std::stod(line.substr(at + 6));
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> parse_memory_stat(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  long long v = 0;
  while (in >> k >> v)
    if (k == key) return v < 0 ? std::nullopt : std::optional<int64_t>(v);
  return std::nullopt;
}

MemoryReading reading_from(const ProcessMemorySources& src, double time_s) {
  MemoryReading r;
  r.time_s = time_s;
  r.rss_bytes = parse_statm_rss(src.statm, src.page_size);
  const std::vector<CgroupDir> dirs = memory_cgroup_dirs(src.proc_cgroup, src.mountinfo);
  std::optional<Level> binding;
  for (const CgroupDir& d : dirs) {
    const std::optional<Level> level = read_level(d);
    if (level && (!binding || level->limit - level->usage < binding->limit - binding->usage)) binding = level;
  }
  if (binding) {
    r.usage_bytes = binding->usage;
    r.limit_bytes = binding->limit;
  } else {
    r.usage_bytes = r.rss_bytes;
  }
  // Stalls of the process's own (innermost) v2 cgroup: they are the process's stalls.
  const auto own_v2 = std::find_if(dirs.begin(), dirs.end(), [](const CgroupDir& d) { return d.version == CgroupVersion::V2; });
  if (own_v2 != dirs.end()) r.pressure_avg10 = parse_pressure_some_avg10(read_text_file(own_v2->path + "/memory.pressure"));
  return r;
}

MemoryReading read_process_memory(double time_s) {
  try {
    const long page = ::sysconf(_SC_PAGESIZE);
    return reading_from({read_text_file("/proc/self/cgroup"), read_text_file("/proc/self/mountinfo"),
                         read_text_file("/proc/self/statm"), page > 0 ? page : 4096},
                        time_s);
  } catch (...) {  // allocation failure while memory is short: report nothing rather than throw
    MemoryReading r;
    r.time_s = time_s;
    return r;
  }
}

}  // namespace db

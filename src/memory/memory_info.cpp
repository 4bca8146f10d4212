#include "memory/memory_info.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "memory/cgroup_memory.h"

namespace db {

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<int64_t> meminfo_available(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string key;
  long long kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return static_cast<int64_t>(kib) * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> available_memory_from(const std::string& meminfo, std::optional<int64_t> cgroup_headroom) {
  const std::optional<int64_t> avail = meminfo_available(meminfo);
  if (avail && cgroup_headroom) return std::min(*avail, *cgroup_headroom);
  return avail ? avail : cgroup_headroom;
}

std::optional<int64_t> available_memory_bytes() {
  return available_memory_from(read_file("/proc/meminfo"), cgroup_memory_headroom(read_file("/proc/self/cgroup"),
                                                                                  read_file("/proc/self/mountinfo")));
}

}  // namespace db

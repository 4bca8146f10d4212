#include "engine/memory_info.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace db {

namespace {

std::string read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<int64_t> parse_bytes(const std::string& text) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (v < 0) return std::nullopt;
    return static_cast<int64_t>(v);
  } catch (...) {
    return std::nullopt;  // "max" (no limit) or unreadable
  }
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

std::optional<int64_t> available_memory_from(const std::string& meminfo, const std::string& cgroup_max,
                                             const std::string& cgroup_current) {
  std::optional<int64_t> avail = meminfo_available(meminfo);
  const std::optional<int64_t> limit = parse_bytes(cgroup_max);
  const std::optional<int64_t> current = parse_bytes(cgroup_current);
  if (limit) {
    const int64_t headroom = std::max<int64_t>(0, *limit - current.value_or(0));
    avail = avail ? std::min(*avail, headroom) : headroom;
  }
  return avail;
}

std::optional<int64_t> available_memory_bytes() {
  return available_memory_from(read_file("/proc/meminfo"), read_file("/sys/fs/cgroup/memory.max"),
                               read_file("/sys/fs/cgroup/memory.current"));
}

}  // namespace db

// How much memory the process may still use, for sizing the KV cache.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace db {

// Bytes available: MemAvailable from /proc/meminfo, lowered to the cgroup v2
// limit's headroom (memory.max - memory.current) when one is set. nullopt when
// neither can be read.
std::optional<int64_t> available_memory_bytes();

// The same from given file contents (for tests): meminfo text, and the cgroup's
// memory.max / memory.current contents (empty when absent).
std::optional<int64_t> available_memory_from(const std::string& meminfo, const std::string& cgroup_max,
                                             const std::string& cgroup_current);

}  // namespace db

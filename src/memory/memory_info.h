// How much memory the process may still use, for sizing the KV cache.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace db {

// Bytes available: MemAvailable from /proc/meminfo, lowered to the smallest
// headroom (limit - usage) of the process's memory cgroups, v1 or v2, own and
// ancestors (see cgroup_memory.h). nullopt when neither can be read.
std::optional<int64_t> available_memory_bytes();

// The same from /proc/meminfo's contents and the cgroups' headroom (nullopt: no
// cgroup sets a limit).
std::optional<int64_t> available_memory_from(const std::string& meminfo, std::optional<int64_t> cgroup_headroom);

}  // namespace db

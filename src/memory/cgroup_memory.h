// The memory limits of the cgroups a process belongs to, for sizing the KV cache.
//
// /proc/<pid>/cgroup names the process's cgroup in each hierarchy, as a path from
// that hierarchy's root. /proc/<pid>/mountinfo says where each hierarchy is mounted
// and which part of it (the mount's `root` field): the cgroup `path` lives at
// `mount_point + (path - root)`. A limit binds every cgroup below it, so the
// process's own cgroup and each ancestor up to the mounted root all count:
//
//   mount root /a, mounted at /sys/fs/cgroup/memory; process in /a/b/c
//     -> /sys/fs/cgroup/memory/b/c, /sys/fs/cgroup/memory/b, /sys/fs/cgroup/memory
//
// cgroup v1 (the `memory` controller's hierarchy): memory.limit_in_bytes and
// memory.usage_in_bytes; a limit of 2^62 or more means none. cgroup v2 (the
// unified hierarchy): memory.max ("max" means none) and memory.current.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace db {

enum class CgroupVersion { V1, V2 };

// One directory whose memory limit binds the process.
struct CgroupDir {
  std::string path;       // a directory in a mounted cgroup filesystem
  CgroupVersion version;  // which files hold its limit and usage
};

// The directories of the process's memory cgroup (v1) and unified cgroup (v2), each
// own cgroup first and then its ancestors up to the mount point, from the contents
// of /proc/<pid>/cgroup and /proc/<pid>/mountinfo. A hierarchy whose cgroup path is
// not under a mounted root (or has ".." in it) contributes nothing.
std::vector<CgroupDir> memory_cgroup_dirs(const std::string& proc_cgroup, const std::string& mountinfo);

// A cgroup limit file's value in bytes; nullopt for "max", a v1 "no limit" value
// (2^62 or more), or anything unreadable.
std::optional<int64_t> parse_cgroup_limit(const std::string& text);

// The whole text of a small file (a cgroup or /proc file); "" when unreadable.
std::string read_text_file(const std::string& path);

// One directory's limit and usage in bytes (usage 0 when unreadable); nullopt
// when it sets no limit.
struct CgroupUsage {
  int64_t limit = 0;
  int64_t usage = 0;
};
std::optional<CgroupUsage> read_cgroup_usage(const CgroupDir& dir);

// limit - usage of one directory (0 when usage exceeds the limit; usage taken as 0
// when unreadable); nullopt when it sets no limit.
std::optional<int64_t> cgroup_dir_headroom(const CgroupDir& dir);

// The smallest headroom over memory_cgroup_dirs(...); nullopt when none sets a limit.
std::optional<int64_t> cgroup_memory_headroom(const std::string& proc_cgroup, const std::string& mountinfo);

}  // namespace db

#include "memory/cgroup_memory.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace db {

namespace {

// v1 reports "no limit" as the largest page-aligned long (about 2^63).
constexpr int64_t kV1Unlimited = int64_t(1) << 62;

// The process's cgroup in one hierarchy (one /proc/<pid>/cgroup line).
struct Membership {
  bool unified = false;                  // the v2 hierarchy (id 0, no controllers)
  std::vector<std::string> controllers;  // v1 controllers of the hierarchy
  std::string path;                      // from the hierarchy's root
};

// One mounted cgroup filesystem (one /proc/<pid>/mountinfo line).
struct Mount {
  bool unified = false;                  // cgroup2
  std::vector<std::string> controllers;  // v1: the super options naming controllers
  std::string root;                      // the part of the hierarchy mounted
  std::string mount_point;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// mountinfo writes space, tab, newline and backslash as \ooo octal escapes.
std::string unescape_octal(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool octal = s[i] == '\\' && i + 3 < s.size() &&
                       std::all_of(s.begin() + i + 1, s.begin() + i + 4, [](char c) { return c >= '0' && c <= '7'; });
    if (octal) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<Membership> parse_memberships(const std::string& text) {
  std::vector<Membership> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    Membership m;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    m.unified = line.compare(0, a, "0") == 0 && controllers.empty();
    m.controllers = split(controllers, ',');
    m.path = line.substr(b + 1);
    out.push_back(std::move(m));
  }
  return out;
}

std::optional<Mount> parse_mount_line(const std::string& line) {
  const std::vector<std::string> f = split(line, ' ');
  const auto dash = std::find(f.begin(), f.end(), "-");
  if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) return std::nullopt;
  const std::string& fstype = dash[1];
  if (fstype != "cgroup" && fstype != "cgroup2") return std::nullopt;
  Mount m;
  m.unified = fstype == "cgroup2";
  m.controllers = split(dash[3], ',');
  m.root = unescape_octal(f[3]);
  m.mount_point = unescape_octal(f[4]);
  return m;
}

std::vector<Mount> parse_mounts(const std::string& mountinfo) {
  std::vector<Mount> out;
  std::istringstream in(mountinfo);
  for (std::string line; std::getline(in, line);)
    if (std::optional<Mount> m = parse_mount_line(line)) out.push_back(std::move(*m));
  return out;
}

// The components of an absolute cgroup path ("/a/b" -> {a, b}); nullopt when it is
// not absolute or climbs with "..".
std::optional<std::vector<std::string>> path_components(const std::string& path) {
  if (path.empty() || path[0] != '/') return std::nullopt;
  std::vector<std::string> out;
  for (std::string& c : split(path, '/')) {
    if (c == "..") return std::nullopt;
    if (!c.empty() && c != ".") out.push_back(std::move(c));
  }
  return out;
}

// The process's cgroup dir and its ancestors in one mount, own cgroup first; empty
// when the cgroup is not under the mount's root.
std::vector<std::string> dirs_in_mount(const Membership& m, const Mount& mount) {
  const auto path = path_components(m.path);
  const auto root = path_components(mount.root);
  if (!path || !root || root->size() > path->size() || !std::equal(root->begin(), root->end(), path->begin()))
    return {};
  std::vector<std::string> out;
  std::string dir = mount.mount_point;
  out.push_back(dir);
  for (size_t i = root->size(); i < path->size(); ++i) {
    dir += (dir.empty() || dir.back() != '/' ? "/" : "") + (*path)[i];
    out.push_back(dir);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// The mount of membership m's hierarchy showing the most of it (the shortest root
// that holds m's cgroup); nullptr when none does.
const Mount* best_mount(const Membership& m, const std::vector<Mount>& mounts) {
  const Mount* best = nullptr;
  size_t best_depth = 0;
  for (const Mount& mount : mounts) {
    const bool same = m.unified ? mount.unified : !mount.unified && contains(mount.controllers, "memory");
    if (!same || dirs_in_mount(m, mount).empty()) continue;
    const size_t depth = path_components(mount.root)->size();
    if (!best || depth < best_depth) {
      best = &mount;
      best_depth = depth;
    }
  }
  return best;
}

std::optional<int64_t> parse_bytes(const std::string& text) {
  try {
    const long long v = std::stoll(text);
    if (v < 0) return std::nullopt;
    return static_cast<int64_t>(v);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

std::vector<CgroupDir> memory_cgroup_dirs(const std::string& proc_cgroup, const std::string& mountinfo) {
  const std::vector<Mount> mounts = parse_mounts(mountinfo);
  std::vector<CgroupDir> out;
  for (const Membership& m : parse_memberships(proc_cgroup)) {
    if (!m.unified && !contains(m.controllers, "memory")) continue;
    const Mount* mount = best_mount(m, mounts);
    if (!mount) continue;
    for (std::string& d : dirs_in_mount(m, *mount))
      out.push_back({std::move(d), m.unified ? CgroupVersion::V2 : CgroupVersion::V1});
  }
  return out;
}

std::optional<int64_t> parse_cgroup_limit(const std::string& text) {
  const std::optional<int64_t> v = parse_bytes(text);  // "max" does not parse
  if (!v || *v >= kV1Unlimited) return std::nullopt;
  return v;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<CgroupUsage> read_cgroup_usage(const CgroupDir& dir) {
  const bool v2 = dir.version == CgroupVersion::V2;
  const std::optional<int64_t> limit =
      parse_cgroup_limit(read_text_file(dir.path + (v2 ? "/memory.max" : "/memory.limit_in_bytes")));
  if (!limit) return std::nullopt;
  const int64_t usage =
      parse_bytes(read_text_file(dir.path + (v2 ? "/memory.current" : "/memory.usage_in_bytes"))).value_or(0);
  return CgroupUsage{*limit, usage};
}

std::optional<int64_t> cgroup_dir_headroom(const CgroupDir& dir) {
  const std::optional<CgroupUsage> u = read_cgroup_usage(dir);
  if (!u) return std::nullopt;
  return std::max<int64_t>(0, u->limit - u->usage);
}

std::optional<int64_t> cgroup_memory_headroom(const std::string& proc_cgroup, const std::string& mountinfo) {
  std::optional<int64_t> least;
  for (const CgroupDir& dir : memory_cgroup_dirs(proc_cgroup, mountinfo))
    if (const std::optional<int64_t> h = cgroup_dir_headroom(dir)) least = least ? std::min(*least, *h) : *h;
  return least;
}

}  // namespace db

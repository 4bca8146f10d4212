// cgroup v1 and v2 trees laid out in a scratch directory, described by
// /proc/self/cgroup and /proc/self/mountinfo texts that point into it.
#include "memory/cgroup_memory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scratch_dir.h"

namespace db {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kCgroupMiB = 1024 * 1024;
const char* kV1NoLimit = "9223372036854771712\n";

void write_cgroup_file(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
}

void v1_level(const fs::path& dir, const std::string& limit, int64_t usage) {
  write_cgroup_file(dir, "memory.limit_in_bytes", limit);
  write_cgroup_file(dir, "memory.usage_in_bytes", std::to_string(usage) + "\n");
}

void v2_level(const fs::path& dir, const std::string& max, int64_t current) {
  write_cgroup_file(dir, "memory.max", max);
  write_cgroup_file(dir, "memory.current", std::to_string(current) + "\n");
}

// A mountinfo line as the kernel writes it for a cgroup (v1) or cgroup2 mount.
std::string v1_mount(const std::string& root, const fs::path& at, const std::string& controllers) {
  return "35 31 0:32 " + root + " " + at.string() + " rw,nosuid,relatime shared:9 - cgroup cgroup rw," + controllers +
         "\n";
}
std::string v2_mount(const std::string& root, const fs::path& at) {
  return "41 31 0:38 " + root + " " + at.string() + " rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
}
const char* kOtherMounts =
    "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n";

std::vector<std::string> paths(const std::vector<CgroupDir>& dirs) {
  std::vector<std::string> out;
  for (const CgroupDir& d : dirs) out.push_back(d.path);
  return out;
}

TEST(CgroupMemory, ParsesLimits) {
  EXPECT_EQ(parse_cgroup_limit("629145600\n"), 629145600);
  EXPECT_EQ(parse_cgroup_limit("max\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit(kV1NoLimit), std::nullopt);
  EXPECT_EQ(parse_cgroup_limit("9223372036854710272\n"), std::nullopt);  // v1 "none" with 64 KiB pages
  EXPECT_EQ(parse_cgroup_limit(""), std::nullopt);
}

TEST(CgroupMemory, V1NestedPathAndEveryAncestor) {
  test::ScratchDir tmp("cgroup_v1");
  const fs::path mp = tmp.path() / "memory";
  v1_level(mp, kV1NoLimit, 900 * kCgroupMiB);
  v1_level(mp / "jobs", std::to_string(2048 * kCgroupMiB), 1000 * kCgroupMiB);          // headroom 1048 MiB
  v1_level(mp / "jobs" / "job7", std::to_string(1536 * kCgroupMiB), 100 * kCgroupMiB);  // headroom 1436 MiB
  v1_level(mp / "jobs" / "job7" / "server", kV1NoLimit, 50 * kCgroupMiB);
  const std::string cgroup = "5:devices:/jobs\n4:memory:/jobs/job7/server\n3:cpu,cpuacct:/jobs\n0::/\n";
  const std::string mountinfo =
      kOtherMounts + v1_mount("/", mp, "memory") + v1_mount("/", tmp.path() / "cpu", "cpu,cpuacct");

  const std::vector<CgroupDir> dirs = memory_cgroup_dirs(cgroup, mountinfo);
  EXPECT_EQ(paths(dirs), (std::vector<std::string>{(mp / "jobs/job7/server").string(), (mp / "jobs/job7").string(),
                                                   (mp / "jobs").string(), mp.string()}));
  for (const CgroupDir& d : dirs) EXPECT_EQ(d.version, CgroupVersion::V1);
  EXPECT_EQ(cgroup_memory_headroom(cgroup, mountinfo), 1048 * kCgroupMiB);  // the ancestor's, the smallest
}

TEST(CgroupMemory, V1MemoryInACombinedHierarchy) {
  test::ScratchDir tmp("cgroup_v1_combined");
  const fs::path mp = tmp.path() / "cpu,memory";
  v1_level(mp / "a", std::to_string(600 * kCgroupMiB), 200 * kCgroupMiB);
  const std::string mountinfo = v1_mount("/", mp, "cpu,memory");
  EXPECT_EQ(cgroup_memory_headroom("7:cpu,memory:/a\n", mountinfo), 400 * kCgroupMiB);
}

TEST(CgroupMemory, V1MountOfASubtree) {
  // A container sees only its own part of the hierarchy, /docker/abc, at the mount point.
  test::ScratchDir tmp("cgroup_v1_subtree");
  const fs::path mp = tmp.path() / "memory";
  v1_level(mp, std::to_string(600 * kCgroupMiB), 100 * kCgroupMiB);
  v1_level(mp / "worker", kV1NoLimit, 10 * kCgroupMiB);
  const std::string mountinfo = v1_mount("/docker/abc", mp, "memory");
  const std::string cgroup = "4:memory:/docker/abc/worker\n";
  EXPECT_EQ(paths(memory_cgroup_dirs(cgroup, mountinfo)),
            (std::vector<std::string>{(mp / "worker").string(), mp.string()}));
  EXPECT_EQ(cgroup_memory_headroom(cgroup, mountinfo), 500 * kCgroupMiB);
  // A cgroup outside the mounted part cannot be read.
  EXPECT_TRUE(memory_cgroup_dirs("4:memory:/docker/abcd\n", mountinfo).empty());
  EXPECT_TRUE(memory_cgroup_dirs("4:memory:/docker/abc/../xyz\n", mountinfo).empty());
}

TEST(CgroupMemory, PrefersTheMountShowingMostOfTheHierarchy) {
  test::ScratchDir tmp("cgroup_v1_two_mounts");
  const fs::path whole = tmp.path() / "whole";
  const fs::path part = tmp.path() / "part";
  v1_level(whole / "a" / "b", kV1NoLimit, 0);
  v1_level(whole / "a", std::to_string(300 * kCgroupMiB), 100 * kCgroupMiB);
  v1_level(part / "b", kV1NoLimit, 0);
  const std::string mountinfo = v1_mount("/a", part, "memory") + v1_mount("/", whole, "memory");
  EXPECT_EQ(cgroup_memory_headroom("4:memory:/a/b\n", mountinfo), 200 * kCgroupMiB);
}

TEST(CgroupMemory, V2NestedPathAndEveryAncestor) {
  test::ScratchDir tmp("cgroup_v2");
  const fs::path mp = tmp.path() / "unified";
  fs::create_directories(mp);                                             // the root cgroup has no memory.max
  v2_level(mp / "user.slice", std::to_string(4096 * kCgroupMiB), 3900 * kCgroupMiB);  // headroom 196 MiB
  v2_level(mp / "user.slice" / "app.scope", "max\n", 300 * kCgroupMiB);
  const std::string mountinfo = kOtherMounts + v2_mount("/", mp);
  const std::string cgroup = "0::/user.slice/app.scope\n";

  const std::vector<CgroupDir> dirs = memory_cgroup_dirs(cgroup, mountinfo);
  EXPECT_EQ(paths(dirs), (std::vector<std::string>{(mp / "user.slice/app.scope").string(), (mp / "user.slice").string(),
                                                   mp.string()}));
  for (const CgroupDir& d : dirs) EXPECT_EQ(d.version, CgroupVersion::V2);
  EXPECT_EQ(cgroup_memory_headroom(cgroup, mountinfo), 196 * kCgroupMiB);
}

TEST(CgroupMemory, V2UsageOverTheLimitLeavesNothing) {
  test::ScratchDir tmp("cgroup_v2_over");
  v2_level(tmp.path() / "a", std::to_string(100 * kCgroupMiB), 120 * kCgroupMiB);
  EXPECT_EQ(cgroup_memory_headroom("0::/a\n", v2_mount("/", tmp.path())), 0);
}

TEST(CgroupMemory, HybridTakesTheSmallestOfBothHierarchies) {
  test::ScratchDir tmp("cgroup_hybrid");
  v1_level(tmp.path() / "memory" / "svc", std::to_string(600 * kCgroupMiB), 100 * kCgroupMiB);  // headroom 500 MiB
  v2_level(tmp.path() / "unified" / "svc", std::to_string(400 * kCgroupMiB), 0);          // headroom 400 MiB
  const std::string mountinfo = v1_mount("/", tmp.path() / "memory", "memory") + v2_mount("/", tmp.path() / "unified");
  EXPECT_EQ(cgroup_memory_headroom("4:memory:/svc\n1:name=systemd:/svc\n0::/svc\n", mountinfo), 400 * kCgroupMiB);
}

TEST(CgroupMemory, MountPointWithEscapedSpace) {
  test::ScratchDir tmp("cgroup_escaped");
  const fs::path mp = tmp.path() / "my cgroups";
  v1_level(mp / "x", std::to_string(64 * kCgroupMiB), 0);
  const std::string mountinfo = v1_mount("/", tmp.path().string() + "/my\\040cgroups", "memory");
  EXPECT_EQ(cgroup_memory_headroom("4:memory:/x\n", mountinfo), 64 * kCgroupMiB);
}

TEST(CgroupMemory, NoLimitAnywhere) {
  test::ScratchDir tmp("cgroup_none");
  v1_level(tmp.path() / "memory" / "x", kV1NoLimit, 5 * kCgroupMiB);
  const std::string mountinfo = v1_mount("/", tmp.path() / "memory", "memory");
  EXPECT_EQ(cgroup_memory_headroom("4:memory:/x\n", mountinfo), std::nullopt);
  EXPECT_EQ(cgroup_memory_headroom("4:memory:/x\n", ""), std::nullopt);  // nothing mounted
  EXPECT_EQ(cgroup_memory_headroom("", mountinfo), std::nullopt);
}

}  // namespace
}  // namespace db

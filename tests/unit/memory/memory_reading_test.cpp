// read_process_memory's parts: /proc texts and fake cgroup trees in a scratch directory.
#include "memory/memory_reading.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scratch_dir.h"

namespace db {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMiB = 1024 * 1024;

void write(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
}

std::string v1_mount(const fs::path& at) {
  return "35 31 0:32 / " + at.string() + " rw,nosuid,relatime shared:9 - cgroup cgroup rw,memory\n";
}
std::string v2_mount(const fs::path& at) {
  return "41 31 0:38 / " + at.string() + " rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";
}
std::string mib(int64_t n) { return std::to_string(n * kMiB) + "\n"; }

TEST(MemoryReading, ParsesStatm) {
  EXPECT_EQ(parse_statm_rss("52000 1500 300 10 0 4000 0\n", 4096), 1500 * 4096);
  EXPECT_EQ(parse_statm_rss("", 4096), 0);
  EXPECT_EQ(parse_statm_rss("12", 4096), 0);
}

TEST(MemoryReading, ParsesPressure) {
  EXPECT_DOUBLE_EQ(*parse_pressure_some_avg10("some avg10=12.50 avg60=3.00 avg300=0.50 total=123\n"
                                               "full avg10=1.00 avg60=0.00 avg300=0.00 total=5\n"),
                   12.5);
  EXPECT_EQ(parse_pressure_some_avg10("full avg10=1.00\n"), std::nullopt);
  EXPECT_EQ(parse_pressure_some_avg10(""), std::nullopt);
}

TEST(MemoryReading, ParsesMemoryStat) {
  const std::string stat = "cache 100\ninactive_file 40\ntotal_inactive_file 70\n";
  EXPECT_EQ(parse_memory_stat(stat, "inactive_file"), 40);
  EXPECT_EQ(parse_memory_stat(stat, "total_inactive_file"), 70);
  EXPECT_EQ(parse_memory_stat(stat, "anon"), std::nullopt);
}

TEST(MemoryReading, V1BindingLevelIsTheSmallestHeadroom) {
  test::ScratchDir tmp("memory_reading_v1");
  const fs::path mp = tmp.path() / "memory";
  write(mp, "memory.limit_in_bytes", "9223372036854771712\n");
  write(mp, "memory.usage_in_bytes", mib(5000));
  write(mp / "jobs", "memory.limit_in_bytes", mib(2048));  // headroom 1048 MiB
  write(mp / "jobs", "memory.usage_in_bytes", mib(1000));
  write(mp / "jobs" / "job7", "memory.limit_in_bytes", mib(500));  // headroom 100 MiB: binding
  write(mp / "jobs" / "job7", "memory.usage_in_bytes", mib(400));
  write(mp / "jobs" / "job7", "memory.stat",
        "inactive_file 1\ntotal_inactive_file " + mib(80) + "mapped_file 2\ntotal_mapped_file " + mib(30));
  const MemoryReading r = reading_from({"4:memory:/jobs/job7\n0::/\n", v1_mount(mp), "100 2560 0 0 0 0 0\n", 4096}, 7.5);
  EXPECT_EQ(r.time_s, 7.5);
  ASSERT_TRUE(r.limit_bytes);
  EXPECT_EQ(*r.limit_bytes, 500 * kMiB);
  EXPECT_EQ(r.usage_bytes, 350 * kMiB);  // usage less the subtree's unmapped inactive file pages (80 - 30)
  EXPECT_EQ(r.rss_bytes, 10 * kMiB);
  EXPECT_EQ(r.pressure_avg10, std::nullopt);
}

TEST(MemoryReading, V2WithPressure) {
  test::ScratchDir tmp("memory_reading_v2");
  const fs::path mp = tmp.path() / "unified";
  fs::create_directories(mp);
  write(mp / "a", "memory.max", mib(1024));
  write(mp / "a", "memory.current", mib(900));
  write(mp / "a" / "b", "memory.max", "max\n");
  write(mp / "a" / "b", "memory.current", mib(800));
  write(mp / "a" / "b", "memory.stat", "anon 1\ninactive_file " + mib(10));
  write(mp / "a" / "b", "memory.pressure", "some avg10=3.25 avg60=1.00 avg300=0.00 total=1\n");
  write(mp / "a", "memory.stat", "inactive_file " + mib(100) + "file_mapped " + mib(300));  // all mapped: kept
  const MemoryReading r = reading_from({"0::/a/b\n", v2_mount(mp), "1 256 0 0 0 0 0\n", 4096}, 0);
  EXPECT_EQ(r.limit_bytes, 1024 * kMiB);
  EXPECT_EQ(r.usage_bytes, 900 * kMiB);  // the binding level a's usage
  ASSERT_TRUE(r.pressure_avg10);
  EXPECT_DOUBLE_EQ(*r.pressure_avg10, 3.25);  // the process's own cgroup's
}

TEST(MemoryReading, NoLimitFallsBackToRss) {
  test::ScratchDir tmp("memory_reading_none");
  const fs::path mp = tmp.path() / "memory";
  write(mp / "x", "memory.limit_in_bytes", "9223372036854771712\n");
  write(mp / "x", "memory.usage_in_bytes", mib(900));
  const MemoryReading r = reading_from({"4:memory:/x\n", v1_mount(mp), "1 512 0 0 0 0 0\n", 4096}, 0);
  EXPECT_EQ(r.limit_bytes, std::nullopt);
  EXPECT_EQ(r.usage_bytes, 2 * kMiB);
  EXPECT_EQ(r.rss_bytes, 2 * kMiB);
  const MemoryReading empty = reading_from({}, 1);
  EXPECT_EQ(empty.limit_bytes, std::nullopt);
  EXPECT_EQ(empty.usage_bytes, 0);
}

TEST(MemoryReading, ReadsThisProcess) {
  const MemoryReading r = read_process_memory(3.0);
  EXPECT_EQ(r.time_s, 3.0);
  EXPECT_GT(r.rss_bytes, 0);
  EXPECT_GT(r.usage_bytes, 0);
  if (r.limit_bytes) {
    EXPECT_GT(*r.limit_bytes, 0);
  }
}

}  // namespace
}  // namespace db

#include "memory/memory_info.h"

#include <gtest/gtest.h>

namespace db {
namespace {

const char* kMeminfo = "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n";

TEST(MemoryInfo, MemAvailableWithoutCgroupLimit) {
  EXPECT_EQ(available_memory_from(kMeminfo, std::nullopt), int64_t(8000000) * 1024);
}

TEST(MemoryInfo, CgroupHeadroomLowersIt) {
  EXPECT_EQ(available_memory_from(kMeminfo, int64_t(3000000000)), int64_t(3000000000));
  EXPECT_EQ(available_memory_from(kMeminfo, 0), 0);
  EXPECT_EQ(available_memory_from("", 3000), 3000);
}

TEST(MemoryInfo, CgroupHeadroomAboveMemAvailableLeavesIt) {
  EXPECT_EQ(available_memory_from(kMeminfo, int64_t(1) << 40), int64_t(8000000) * 1024);
}

TEST(MemoryInfo, NothingReadable) { EXPECT_FALSE(available_memory_from("", std::nullopt)); }

TEST(MemoryInfo, ThisMachineHasSome) {
  const auto avail = available_memory_bytes();
  ASSERT_TRUE(avail);
  EXPECT_GT(*avail, 0);
}

}  // namespace
}  // namespace db

#include "engine/memory_info.h"

#include <gtest/gtest.h>

namespace db {
namespace {

const char* kMeminfo = "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n";

TEST(MemoryInfo, MemAvailableWithoutCgroupLimit) {
  EXPECT_EQ(available_memory_from(kMeminfo, "", ""), int64_t(8000000) * 1024);
  EXPECT_EQ(available_memory_from(kMeminfo, "max\n", "123\n"), int64_t(8000000) * 1024);
}

TEST(MemoryInfo, CgroupHeadroomLowersIt) {
  EXPECT_EQ(available_memory_from(kMeminfo, "4000000000\n", "1000000000\n"), int64_t(3000000000));
  EXPECT_EQ(available_memory_from(kMeminfo, "1000\n", "5000\n"), 0);
  EXPECT_EQ(available_memory_from("", "4000\n", "1000\n"), 3000);
}

TEST(MemoryInfo, NothingReadable) { EXPECT_FALSE(available_memory_from("", "", "")); }

TEST(MemoryInfo, ThisMachineHasSome) {
  const auto avail = available_memory_bytes();
  ASSERT_TRUE(avail);
  EXPECT_GT(*avail, 0);
}

}  // namespace
}  // namespace db

// HugeBuffer: zeroed, aligned, movable memory, advised for huge pages from 2 MB up.
#include "util/huge_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace db {
namespace {

// The VmFlags line of the /proc/self/smaps mapping holding `p` (empty if none).
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= addr && addr < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool has_flag(const std::string& vm_flags, const std::string& flag) {
  return (vm_flags + " ").find(" " + flag + " ") != std::string::npos;
}

TEST(HugeBuffer, SmallBuffersAreZeroedPageAlignedAndWritable) {
  for (size_t bytes : {size_t{1}, size_t{4095}, size_t{4097}, size_t{100000}}) {
    HugeBuffer b(bytes);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(b.size(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 4096, 0u);
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(b.data()[i], 0) << "byte " << i << " of " << bytes;
    b.data()[bytes - 1] = 7;
    EXPECT_EQ(b.data()[bytes - 1], 7);
  }
}

TEST(HugeBuffer, LargeBuffersAreHugePageAlignedAndAdvised) {
  const size_t bytes = 5 * HugeBuffer::kHugePage + 123;
  HugeBuffer b(bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % HugeBuffer::kHugePage, 0u);
  EXPECT_EQ(b.data()[0], 0);
  EXPECT_EQ(b.data()[bytes - 1], 0);
  b.data()[bytes - 1] = 1;
  const std::string flags = vm_flags_of(b.data());
  ASSERT_FALSE(flags.empty()) << "no mapping holds the buffer";
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  if (!thp) GTEST_SKIP() << "this kernel has no transparent huge pages";
  EXPECT_TRUE(has_flag(flags, "hg")) << "huge pages not advised: " << flags;
  const std::string small = vm_flags_of(HugeBuffer(4096).data());
  EXPECT_FALSE(has_flag(small, "hg")) << small;
}

TEST(HugeBuffer, MovesOwnership) {
  HugeBuffer a(3 * HugeBuffer::kHugePage);
  uint8_t* p = a.data();
  p[0] = 5;
  HugeBuffer b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.data()[0], 5);
  HugeBuffer c;
  EXPECT_EQ(c.data(), nullptr);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  c = HugeBuffer();
  EXPECT_EQ(c.data(), nullptr);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(HugeBuffer(0).data(), nullptr);
}

}  // namespace
}  // namespace db

// sys_error's message format and write_all's / write_all_at's whole-buffer writes.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "util/error.h"
#include "util/fd_write.h"

namespace db {
namespace {

TEST(SysError, NamesPathWhatAndReason) {
  EXPECT_EQ(sys_error("/x/y", "cannot open", ENOENT), std::string("/x/y: cannot open: ") + std::strerror(ENOENT));
  errno = EACCES;
  EXPECT_EQ(sys_error("f", "write failed"), std::string("f: write failed: ") + std::strerror(EACCES));
}

TEST(WriteAll, WritesEveryByteOfALargeBuffer) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  // Many times the pipe's buffer, so that the write completes only as a reader drains it.
  const int pipe_size = ::fcntl(fds[1], F_GETPIPE_SZ);
  ASSERT_GT(pipe_size, 0);
  std::string data(static_cast<size_t>(pipe_size) * 8 + 123, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  std::string got;
  std::thread reader([&] {
    char buf[1000];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
  });
  write_all(fds[1], data, "pipe");
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(got, data);
}

TEST(WriteAll, ThrowsNamingThePath) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ::close(fds[1]);
  try {
    write_all(fds[0], "x", "the-file");  // the read end is not writable: EBADF
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), std::string("the-file: write failed: ") + std::strerror(EBADF));
  }
  ::close(fds[0]);
}

TEST(WriteAllAt, WritesAtTheOffsetAndLeavesTheFileOffset) {
  char path[] = "/tmp/write_all_at_XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  write_all(fd, "0123456789", "f");
  write_all_at(fd, "ab", 3, "f");
  write_all_at(fd, "yz", 12, "f");  // past the end: the gap reads as zeros
  write_all(fd, "Q", "f");         // the file offset is still 10
  char buf[16] = {};
  ASSERT_EQ(::pread(fd, buf, sizeof buf, 0), 14);
  EXPECT_EQ(std::string(buf, 14), std::string("012ab56789Q\0yz", 14));
  ::close(fd);
}

TEST(WriteAllAt, ThrowsNamingThePath) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  try {
    write_all_at(fds[0], "x", 0, "the-pipe");  // a pipe cannot be written at an offset: ESPIPE
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), std::string("the-pipe: write failed: ") + std::strerror(ESPIPE));
  }
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace db

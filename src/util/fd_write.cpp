#include "util/fd_write.h"

#include <unistd.h>

#include <cerrno>

#include "util/error.h"

namespace db {

void write_all(int fd, std::string_view data, const std::string& path) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(sys_error(path, "write failed"));
    }
    off += static_cast<size_t>(n);
  }
}

void write_all_at(int fd, std::string_view data, uint64_t offset, const std::string& path) {
  size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = ::pwrite(fd, data.data() + off, data.size() - off, static_cast<off_t>(offset + off));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(sys_error(path, "write failed"));
    }
    off += static_cast<size_t>(n);
  }
}

}  // namespace db

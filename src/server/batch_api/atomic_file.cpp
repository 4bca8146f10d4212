#include "server/batch_api/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/error.h"
#include "util/fd_write.h"

namespace db::server {

void sync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw Error(sys_error(dir, "cannot open the directory to sync it"));
  const int err = ::fsync(fd) != 0 ? errno : 0;
  ::close(fd);
  if (err != 0) throw Error(sys_error(dir, "fsync of the directory failed", err));
}

void write_file_atomic(const std::string& path, std::string_view data) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(sys_error(tmp, "cannot create"));
  try {
    write_all(fd, data, tmp);
    if (::fsync(fd) != 0) throw Error(sys_error(tmp, "fsync failed"));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string msg = sys_error(path, "cannot rename the temporary file over");
    ::unlink(tmp.c_str());
    throw Error(msg);
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  sync_directory(dir.empty() ? "." : dir);
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open for reading");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error(path + ": read error");
  return std::move(buf).str();
}

}  // namespace db::server

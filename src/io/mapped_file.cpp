#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

namespace db {

namespace {

// Closes the descriptor on every path out of open().
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::unique_ptr<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(sys_error(path, "cannot open file"));
  FdCloser closer{fd};

  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error(sys_error(path, "cannot stat file"));
  if (S_ISDIR(st.st_mode)) throw Error(path + ": cannot map file: expected a regular file, got a directory");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": cannot map file: expected a regular file, got a special file");

  std::unique_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = static_cast<size_t>(st.st_size);
  if (m->size_ == 0) return m;  // mmap rejects length 0; an empty file maps to no bytes

  void* p = ::mmap(nullptr, m->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) throw Error(sys_error(path, "cannot mmap file"));
  m->data_ = static_cast<const uint8_t*>(p);
  return m;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void MappedFile::prefetch() const {
  // A hint only: a failure changes nothing about correctness.
  if (data_ != nullptr) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_WILLNEED);
}

}  // namespace db

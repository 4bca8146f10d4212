#include "http/body_spool.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "util/error.h"

namespace db::http {

SpooledBody::SpooledBody(std::string path, int fd, std::shared_ptr<std::atomic<size_t>> open_files)
    : path_(std::move(path)), fd_(fd), open_files_(std::move(open_files)) {}

SpooledBody::~SpooledBody() {
  close();
  ::unlink(path_.c_str());
  --*open_files_;
}

void SpooledBody::append(const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Error(path_ + ": cannot write the request body: " + std::strerror(errno));
    data += w;
    n -= static_cast<size_t>(w);
    size_ += static_cast<size_t>(w);
  }
}

void SpooledBody::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

BodySpool::BodySpool(BodySpoolOptions opts) : opts_(std::move(opts)) {
  if (!opts_.wants) return;
  std::filesystem::create_directories(opts_.dir);
  // Bodies a previous run left behind (it stopped while they arrived) belong to nobody.
  for (const auto& entry : std::filesystem::directory_iterator(opts_.dir))
    if (entry.path().filename().string().rfind("body-", 0) == 0) std::filesystem::remove(entry.path());
}

std::shared_ptr<SpooledBody> BodySpool::open() {
  if (open_files_->fetch_add(1) >= opts_.max_files) {
    --*open_files_;
    return nullptr;
  }
  std::string path = opts_.dir + "/body-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) {
    --*open_files_;
    throw Error(opts_.dir + ": cannot create a file for a request body: " + std::strerror(errno));
  }
  return std::make_shared<SpooledBody>(path, fd, open_files_);
}

}  // namespace db::http

#include "server/batch_api/file_stream.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace db::server {

namespace {

constexpr size_t kPieceBytes = 1u << 20;

class FileStream : public std::enable_shared_from_this<FileStream> {
 public:
  FileStream(std::shared_ptr<http::Responder> res, std::shared_ptr<OpenFile> file)
      : res_(std::move(res)), file_(std::move(file)) {}

  // Queues the next piece and asks to be called again once it is written; ends the
  // response at the end of the file. A read error cuts the stream short (the 200 is out).
  void pump() {
    std::string piece(kPieceBytes, '\0');
    ssize_t n;
    do {
      n = ::read(file_->fd(), piece.data(), piece.size());
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      res_->end();
      return;
    }
    piece.resize(static_cast<size_t>(n));
    res_->write(std::move(piece));
    res_->on_drained([self = shared_from_this()] { self->pump(); });
  }

 private:
  std::shared_ptr<http::Responder> res_;
  std::shared_ptr<OpenFile> file_;
};

}  // namespace

std::shared_ptr<OpenFile> OpenFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::shared_ptr<OpenFile>(new OpenFile(fd));
}

OpenFile::~OpenFile() { ::close(fd_); }

void stream_file(std::shared_ptr<http::Responder> res, http::Headers headers, std::shared_ptr<OpenFile> file) {
  res->begin_stream(200, std::move(headers));
  std::make_shared<FileStream>(std::move(res), std::move(file))->pump();
}

}  // namespace db::server

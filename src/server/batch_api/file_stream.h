// A file sent as a response body a piece at a time: each 1 MiB piece is read and
// queued once the one before has gone to the socket (Responder::on_drained), so a
// download of any size holds about 2 MiB, and a client that stops reading stops the
// reads. The pieces after the first are read on the connection's I/O thread.
#pragma once
#include <memory>
#include <string>

#include "http/responder.h"

namespace db::server {

// A file open for reading; closed with the last reference.
class OpenFile {
 public:
  // nullptr when `path` cannot be opened (e.g. it was removed).
  static std::shared_ptr<OpenFile> open(const std::string& path);
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }

 private:
  explicit OpenFile(int fd) : fd_(fd) {}
  int fd_;
};

// Answers 200 with `headers` and the bytes of `file` (from its current offset) as a
// chunked stream.
void stream_file(std::shared_ptr<http::Responder> res, http::Headers headers, std::shared_ptr<OpenFile> file);

}  // namespace db::server

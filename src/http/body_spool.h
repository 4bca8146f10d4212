// Request bodies written to disk as they arrive instead of held in memory: for
// routes that take large uploads (the Batch API's files). The server asks the
// spool's `wants` about each request head (method, normalized path, headers; no
// body yet); a body it wants goes to a fresh file in `dir`, up to `max_bytes`,
// and reaches the handler as Request::body_file. At most `max_files` bodies are
// spooled at once (another gets 503), so disk use is bounded too. The directory is
// the spool's own: files left in it by an earlier run are removed at start.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace db::http {

struct Request;

struct BodySpoolOptions {
  std::string dir;                                  // where spooled bodies are written (created when missing)
  size_t max_bytes = 0;                             // a larger spooled body gets 413
  size_t max_files = 4;                             // spooled bodies at once
  std::function<bool(const Request& head)> wants;   // null: spool nothing
};

// A body on disk; the file is removed when the last reference goes.
class SpooledBody {
 public:
  // Takes `fd` (open for writing on `path`) and one of `open_files`.
  SpooledBody(std::string path, int fd, std::shared_ptr<std::atomic<size_t>> open_files);
  ~SpooledBody();
  SpooledBody(const SpooledBody&) = delete;
  SpooledBody& operator=(const SpooledBody&) = delete;

  const std::string& path() const { return path_; }
  size_t size() const { return size_; }
  // Appends bytes (on the I/O thread, as they arrive); throws db::Error when the disk refuses.
  void append(const char* data, size_t n);
  // Closes the file for writing (the handler reads it by path).
  void close();

 private:
  std::string path_;
  int fd_ = -1;
  size_t size_ = 0;
  std::shared_ptr<std::atomic<size_t>> open_files_;
};

class BodySpool {
 public:
  explicit BodySpool(BodySpoolOptions opts);
  const BodySpoolOptions& options() const { return opts_; }
  bool wants(const Request& head) const { return opts_.wants && opts_.wants(head); }
  // A new empty body file, or nullptr when max_files are open already. Throws db::Error
  // when the file cannot be created.
  std::shared_ptr<SpooledBody> open();

 private:
  BodySpoolOptions opts_;
  std::shared_ptr<std::atomic<size_t>> open_files_ = std::make_shared<std::atomic<size_t>>(0);
};

}  // namespace db::http

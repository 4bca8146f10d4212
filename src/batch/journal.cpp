#include "batch/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "batch/batch_input.h"
#include "util/error.h"

namespace db::batch {

namespace {

std::string sys_error(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

// Adds one complete output line to `state`; throws db::Error when it is not a record.
void add_record(JournalState& state, const std::string& text, const std::string& path, size_t line_no) {
  const auto where = [&] { return path + " line " + std::to_string(line_no); };
  nlohmann::json r;
  try {
    r = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where() + ": not a batch output record (" + e.what() +
                "); is this the output file of this batch? Move it away to start over.");
  }
  if (!r.is_object() || !r.contains("custom_id") || !r.contains("error"))
    throw Error(where() + ": not a batch output record (no custom_id / error fields)");
  const auto& id = r["custom_id"];
  const std::string custom_id = id.is_string() ? id.get<std::string>() : "";
  const auto& err = r["error"];
  const std::string code = err.is_object() && err.contains("code") && err["code"].is_string()
                               ? err["code"].get<std::string>()
                               : "";
  if (is_line_level_code(code)) {
    ++state.line_errors[{code, custom_id}];
  } else if (!custom_id.empty()) {
    state.finished.insert(custom_id);
  }
  ++state.records;
  if (!err.is_null()) ++state.error_records;
}

}  // namespace

JournalState recover_journal(const std::string& path) {
  JournalState state;
  if (!std::filesystem::exists(path)) return state;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the existing output file to resume from it");
  std::string text;
  uint64_t complete_bytes = 0;
  size_t line_no = 0;
  while (std::getline(in, text)) {
    if (in.eof()) break;  // the last line has no newline: torn by a crash mid-write
    ++line_no;
    complete_bytes += text.size() + 1;
    if (text.empty()) continue;
    add_record(state, text, path, line_no);
  }
  if (in.bad()) throw Error(path + ": read error while resuming");
  const uint64_t size = std::filesystem::file_size(path);
  if (size > complete_bytes) {
    std::error_code ec;
    std::filesystem::resize_file(path, complete_bytes, ec);
    if (ec) throw Error(path + ": cannot cut the torn last line: " + ec.message());
    state.truncated_bytes = size - complete_bytes;
  }
  return state;
}

JournalWriter::JournalWriter(const std::string& path, JournalSyncPolicy policy)
    : path_(path), policy_(policy), last_sync_(std::chrono::steady_clock::now()) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(sys_error(path, "cannot open the output file for writing"));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string msg = errno == EWOULDBLOCK ? path + ": another process is writing this output file"
                                                 : sys_error(path, "cannot lock the output file");
    ::close(fd_);
    fd_ = -1;
    throw Error(msg);
  }
}

JournalWriter::~JournalWriter() {
  if (fd_ < 0) return;
  if (pending_ > 0) ::fdatasync(fd_);
  ::close(fd_);
}

void JournalWriter::append(const std::string& line) {
  std::string buf;
  buf.reserve(line.size() + 1);
  buf += line;
  buf += '\n';
  size_t off = 0;
  while (off < buf.size()) {
    const ssize_t n = ::write(fd_, buf.data() + off, buf.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(sys_error(path_, "write failed"));
    }
    off += static_cast<size_t>(n);
  }
  ++appended_;
  ++pending_;
  tick();
}

void JournalWriter::tick() {
  if (pending_ == 0) return;
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_sync_).count();
  if (pending_ >= policy_.every_records || since >= policy_.every_seconds) sync();
}

void JournalWriter::sync() {
  if (pending_ == 0) return;
  if (::fdatasync(fd_) != 0) throw Error(sys_error(path_, "fdatasync failed"));
  pending_ = 0;
  last_sync_ = std::chrono::steady_clock::now();
}

}  // namespace db::batch

#include "batch/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "batch/batch_input.h"
#include "util/error.h"
#include "util/fd_write.h"

namespace db::batch {

namespace {

JournalRecord parse_record(const std::string& text, const std::string& path, size_t line_no) {
  const auto not_a_record = [&](const std::string& why) {
    return JournalFormatError(path + " line " + std::to_string(line_no) + ": not a batch output record (" + why + ")");
  };
  nlohmann::json r;
  try {
    r = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw not_a_record(e.what());
  }
  if (!r.is_object() || !r.contains("custom_id") || !r.contains("error"))
    throw not_a_record("no custom_id / error fields");
  JournalRecord rec;
  rec.line_no = line_no;
  rec.text = text;
  if (const auto& id = r.at("custom_id"); id.is_string()) rec.custom_id = id.get<std::string>();
  const auto& err = r.at("error");
  rec.is_error = !err.is_null();
  if (err.is_object() && err.contains("code") && err.at("code").is_string())
    rec.error_code = err.at("code").get<std::string>();
  return rec;
}

}  // namespace

JournalScan read_journal(const std::string& path, const std::function<void(const JournalRecord&)>& on_record) {
  JournalScan scan;
  if (!std::filesystem::exists(path)) return scan;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the batch output file for reading");
  std::string text;
  size_t line_no = 0;
  while (std::getline(in, text)) {
    if (in.eof()) {  // the last line has no newline: torn by a crash mid-write
      scan.torn_bytes = text.size();
      break;
    }
    ++line_no;
    scan.complete_bytes += text.size() + 1;
    if (text.empty()) continue;
    on_record(parse_record(text, path, line_no));
    ++scan.records;
  }
  if (in.bad()) throw Error(path + ": read error in the batch output file");
  return scan;
}

JournalState recover_journal(const std::string& path) {
  JournalState state;
  JournalScan scan;
  try {
    scan = read_journal(path, [&](const JournalRecord& r) {
      if (is_line_level_code(r.error_code)) {
        ++state.line_errors[{r.error_code, r.custom_id}];
      } else if (!r.custom_id.empty()) {
        state.finished.insert(r.custom_id);
      }
      if (r.is_error) ++state.error_records;
    });
  } catch (const JournalFormatError& e) {
    throw Error(std::string(e.what()) + "; is this the output file of this batch? Move it away to start over.");
  }
  state.records = scan.records;
  if (scan.torn_bytes > 0) {
    std::error_code ec;
    std::filesystem::resize_file(path, scan.complete_bytes, ec);
    if (ec) throw Error(path + ": cannot cut the torn last line: " + ec.message());
    state.truncated_bytes = scan.torn_bytes;
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
  write_all(fd_, buf, path_);
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

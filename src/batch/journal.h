// The batch output file doubles as the job's journal: every finished record is
// appended as one complete line with one write(), and synced to disk in groups.
// After a crash at any moment the file holds complete lines, possibly followed
// by one torn line without its newline. This file owns reading that format:
// read_journal() yields the complete records and leaves a torn last line out;
// recover_journal() also cuts that tail and reports what is already done, so a
// rerun writes each remaining record once.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "util/error.h"

namespace db::batch {

// One complete record of a journal, as read back (see batch_record.h for the format).
struct JournalRecord {
  size_t line_no = 0;      // 1-based line in the file
  std::string_view text;   // the line as written, without its newline; valid during the callback only
  std::string custom_id;   // "" when the record's custom_id is not a string (a bad input line without one)
  std::string error_code;  // the error's "code" when it is a string, else ""
  bool is_error = false;   // the record's "error" is not null (otherwise it is a success)
};

struct JournalScan {
  size_t records = 0;           // complete records passed to the callback
  uint64_t complete_bytes = 0;  // bytes of the complete lines, up to and including the last newline
  uint64_t torn_bytes = 0;      // bytes after that: a torn last line, left out (0 when none)
};

// A complete journal line that is not a batch output record: not a JSON object
// with "custom_id" and "error" fields. The message names the file and the line.
class JournalFormatError : public Error {
 public:
  using Error::Error;
};

// Calls `on_record` for each complete record of the journal at `path`, in file
// order; blank lines are skipped but counted in line numbers. A missing file is
// an empty journal. A last line without its newline (torn by a crash mid-write)
// is not a record: it is left out and counted in torn_bytes; the file is not
// changed. Throws JournalFormatError for a complete line that is not a record,
// db::Error when the file cannot be read, and whatever `on_record` throws.
JournalScan read_journal(const std::string& path, const std::function<void(const JournalRecord&)>& on_record);

struct JournalState {
  std::unordered_set<std::string> finished;               // custom_ids with a terminal record
  std::map<std::pair<std::string, std::string>, size_t> line_errors;  // (code, custom_id or "") -> records of
                                                                       // line-level errors (see is_line_level_code)
  size_t records = 0;             // complete records in the file
  size_t error_records = 0;       // of those, records with an error (the rest are successes)
  uint64_t truncated_bytes = 0;   // bytes of a torn last line that were cut off
};

// Reads the output file at `path` with read_journal() (a missing file is an
// empty journal) and truncates a torn last line. Throws db::Error naming the file
// and line when a complete line is not a batch output record.
JournalState recover_journal(const std::string& path);

struct JournalSyncPolicy {
  size_t every_records = 64;  // fdatasync after this many appended records
  double every_seconds = 1.0; // ... or when this long has passed since the last sync with records pending
};

class JournalWriter {
 public:
  // Opens (creating if needed) `path` for appending and locks it against other
  // writers. Throws db::Error when it cannot, or when another process holds it.
  explicit JournalWriter(const std::string& path, JournalSyncPolicy policy = {});
  ~JournalWriter();  // syncs and closes
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  // Appends `line` + '\n' in one write. Throws db::Error on a write error.
  void append(const std::string& line);
  // Syncs when the policy says it is time (call it now and then while idle).
  void tick();
  // Syncs now if anything is pending.
  void sync();

  size_t appended() const { return appended_; }

 private:
  std::string path_;
  JournalSyncPolicy policy_;
  int fd_ = -1;
  size_t appended_ = 0, pending_ = 0;
  std::chrono::steady_clock::time_point last_sync_;
};

}  // namespace db::batch

// The batch output file doubles as the job's journal: every finished record is
// appended as one complete line with one write(), and synced to disk in groups.
// After a crash at any moment the file holds complete lines, possibly followed
// by one torn line without its newline; recover_journal() cuts that tail and
// reports what is already done, so a rerun writes each remaining record once.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>

namespace db::batch {

struct JournalState {
  std::unordered_set<std::string> finished;               // custom_ids with a terminal record
  std::map<std::pair<std::string, std::string>, size_t> line_errors;  // (code, custom_id or "") -> records of
                                                                       // line-level errors (see is_line_level_code)
  size_t records = 0;             // complete records in the file
  size_t error_records = 0;       // of those, records with an error (the rest are successes)
  uint64_t truncated_bytes = 0;   // bytes of a torn last line that were cut off
};

// Reads the output file at `path` if it exists (a missing file is an empty
// journal) and truncates a torn last line. Throws db::Error naming the file and
// line when a complete line is not a batch output record.
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

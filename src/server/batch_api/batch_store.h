// The batches of the batch API, one directory each:
//   <dir>/<batch id>/batch.json     the batch (atomically replaced on every change)
//   <dir>/<batch id>/input.jsonl    its input (a hard link to the uploaded file, or a copy)
//   <dir>/<batch id>/journal.jsonl  the records of finished requests (see batch/journal.h)
// A batch exists once batch.json does; a directory without one (a crash while
// creating it) is removed on load. Thread-safe.
#pragma once
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "server/batch_api/batch_state.h"

namespace db::server {

class BatchStore {
 public:
  // Creates `dir` when missing and loads the batches in it; throws db::Error naming
  // a batch.json that cannot be read.
  explicit BatchStore(std::string dir);

  // Gives `b` a new id, seq and created_at, snapshots `input_path` as its input and
  // saves it. Returns the stored record.
  BatchRecord create(BatchRecord b, const std::string& input_path);
  // Persists `b` (atomically) and makes it the current state of its id.
  void save(const BatchRecord& b);
  std::optional<BatchRecord> get(const std::string& id) const;
  // Every batch, newest first.
  std::vector<BatchRecord> list() const;

  std::string input_path(const std::string& id) const;
  std::string journal_path(const std::string& id) const;

 private:
  std::string batch_dir(const std::string& id) const;
  std::string dir_;
  mutable std::mutex mu_;
  std::map<std::string, BatchRecord> batches_;
  uint64_t next_seq_ = 1;
};

}  // namespace db::server

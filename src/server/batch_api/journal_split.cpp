#include "server/batch_api/journal_split.h"

#include "batch/journal.h"

namespace db::server {

SplitJournal split_journal(const std::string& path) {
  SplitJournal out;
  batch::read_journal(path, [&](const batch::JournalRecord& r) {
    std::string& dest = r.is_error ? out.errors : out.output;
    dest += r.text;
    dest += '\n';
    ++(r.is_error ? out.failed : out.completed);
  });
  return out;
}

}  // namespace db::server

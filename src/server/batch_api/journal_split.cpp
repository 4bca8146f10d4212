#include "server/batch_api/journal_split.h"

#include <nlohmann/json.hpp>

#include "batch/batch_record.h"
#include "batch/journal.h"

namespace db::server {

namespace {

// usage.<key> of a success record's response body; 0 when it has none (a record
// the server did not write, e.g. an edited journal, costs nothing rather than failing).
int64_t usage_tokens(const nlohmann::json& record, const char* key) {
  const nlohmann::json* usage = &record;
  for (const char* step : {"response", "body", "usage", key}) {
    if (!usage->is_object()) return 0;
    const auto it = usage->find(step);
    if (it == usage->end()) return 0;
    usage = &*it;
  }
  return usage->is_number_integer() ? usage->get<int64_t>() : 0;
}

}  // namespace

SplitJournal split_journal(const std::string& path) {
  SplitJournal out;
  batch::read_journal(path, [&](const batch::JournalRecord& r) {
    std::string& dest = r.is_error ? out.errors : out.output;
    dest += r.text;
    dest += '\n';
    ++(r.is_error ? out.failed : out.completed);
    if (r.is_error) {
      if (r.error_code == batch::kBatchExpiredCode) ++out.expired;
      return;
    }
    const nlohmann::json record = nlohmann::json::parse(r.text, nullptr, /*allow_exceptions=*/false);
    out.input_tokens += usage_tokens(record, "prompt_tokens");
    out.output_tokens += usage_tokens(record, "completion_tokens");
  });
  return out;
}

}  // namespace db::server

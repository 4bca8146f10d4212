// A batch's journal split the way the OpenAI Batch API hands results out: the
// records of successful requests go to the output file, those with an error to
// the error file. Also what the batch object reports from them: how many records
// say the batch expired, and the tokens of the successful requests.
#pragma once
#include <cstdint>
#include <string>

namespace db::server {

struct SplitJournal {
  std::string output;         // success records, one per line, in journal order
  std::string errors;         // error records, one per line, in journal order
  int64_t completed = 0;      // lines in `output`
  int64_t failed = 0;         // lines in `errors`
  int64_t expired = 0;        // of those, records with code batch::kBatchExpiredCode
  int64_t input_tokens = 0;   // over `output`: the responses' usage.prompt_tokens
  int64_t output_tokens = 0;  // over `output`: the responses' usage.completion_tokens
};

// Reads the complete records of the journal at `path` with batch::read_journal()
// (a missing file is empty; a torn last line is left out). Throws db::Error naming
// a line that is not a record.
SplitJournal split_journal(const std::string& path);

}  // namespace db::server

// The offline batch job behind `deepbatch run`: reads an OpenAI Batch API JSONL
// file, runs every request on the engine, and appends one output record per
// request to the output file as soon as it finishes (completion order).
//
//   input lines --parse--> items / bad lines (error records at once)
//   items --prepare (tokenize, off the engine thread)--> Engine::submit (a window in flight)
//   engine outputs --collect--> finished request --record--> output file (journal)
//
// Rerunning with the same output file resumes: records already there are kept,
// a torn last line is cut, and only the missing custom_ids run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "batch/journal.h"
#include "batch/progress.h"

namespace db {
class Engine;
class ModelBundle;
}  // namespace db

namespace db::batch {

struct BatchJobOptions {
  std::string input_path;          // OpenAI Batch API request file (JSONL)
  std::string output_path;         // batch output file (JSONL); also the journal to resume from
  std::string model_name;          // "model" in responses of requests that name none
  int64_t max_context = 0;         // the model's context length in tokens
  size_t max_in_flight = 4096;     // requests submitted and not yet finished, at most
  JournalSyncPolicy sync;          // how often the output is synced to disk
  std::FILE* progress_out = nullptr;  // where progress goes (nullptr: nowhere)
  bool progress_tty = false;       // redraw one line (terminal) instead of printing plain lines
};

// Runs the job to the end. Bad lines and failed requests get error records; only
// problems with the files themselves (unreadable input, unwritable or foreign
// output) throw db::Error. `bundle` tokenizes; `engine` generates.
BatchSummary run_batch_job(Engine& engine, const ModelBundle& bundle, const BatchJobOptions& opts);

}  // namespace db::batch

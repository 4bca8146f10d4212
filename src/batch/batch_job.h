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
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "batch/batch_input.h"
#include "batch/batch_record.h"
#include "batch/journal.h"
#include "batch/progress.h"

namespace db {
class Engine;
class ModelBundle;
}  // namespace db

namespace db::batch {

// Live counts over the whole input file (records of earlier runs included), for
// other threads to read while the job runs.
struct BatchCounters {
  std::atomic<size_t> total{0};      // non-blank input lines (set once the input is read)
  std::atomic<size_t> completed{0};  // success records in the output
  std::atomic<size_t> failed{0};     // error records in the output
};

struct BatchJobOptions {
  std::string input_path;          // OpenAI Batch API request file (JSONL)
  const std::vector<NumberedLine>* lines = nullptr;  // when set, the input instead of input_path's file
                                                     // (lines of a file run elsewhere, with their numbers)
  std::string output_path;         // batch output file (JSONL); also the journal to resume from
  std::string model_name;          // "model" in responses of requests that name none
  int64_t max_context = 0;         // the model's context length in tokens
  size_t max_in_flight = 4096;     // requests submitted and not yet finished, at most
  JournalSyncPolicy sync;          // how often the output is synced to disk
  std::FILE* progress_out = nullptr;  // where progress goes (nullptr: nowhere)
  bool progress_tty = false;       // redraw one line (terminal) instead of printing plain lines
  std::optional<int> priority;     // engine priority of every request (nullopt: what each request asks for)
  std::string tenant;              // EngineRequest::tenant of every request ("" = nobody in particular)
  const std::atomic<bool>* stop = nullptr;  // once true: submit nothing more, abort what is in flight and
                                            // return; aborted requests get no record (a rerun runs them)
  BatchCounters* counters = nullptr;        // updated as records are written (nullptr: none)
  // When set, the batch ends here, however far it got: each request is submitted with
  // what is left as its deadline (EngineRequest::timeout_seconds; a shorter "timeout"
  // of its own body still applies). Once it passed, nothing more is submitted, what is
  // in flight is aborted, requests that finished keep their records, and every other
  // request gets an error record with code kBatchExpiredCode. A rerun after that only
  // writes the records still missing.
  std::optional<std::chrono::system_clock::time_point> deadline;
};

// Runs the job to the end. Bad lines and failed requests get error records (a request
// its own "timeout" ended: code "request_timeout"; one the engine's queue limit
// ended: "queue_timeout"); only
// problems with the files themselves (unreadable input, unwritable or foreign
// output) throw db::Error. `bundle` tokenizes; `engine` generates. Waits only for its
// own requests, so other traffic may share the engine. BatchSummary::stopped tells
// whether `opts.stop` ended it early.
BatchSummary run_batch_job(Engine& engine, const ModelBundle& bundle, const BatchJobOptions& opts);

}  // namespace db::batch

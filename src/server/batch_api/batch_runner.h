// Runs the batches of a BatchStore on a shared engine, up to max_concurrent at once
// (each on a thread of its own), started in creation order (FIFO). Each batch is a
// batch::run_batch_job over its input and journal at background priority (2), so
// live requests on the same engine go first; within the class the engine admits
// the batches' owners in turn. Then its journal is split into the output and error files.
//
//   queue (FIFO) --> validating -> in_progress --run_batch_job--> finalizing --split--> completed
//   cancel(): queued -> cancelled at once; running -> cancelling, the job stops (in-flight
//             requests aborted, finished ones kept) --split--> cancelled
//   expiry:   each request is submitted with the batch's expires_at as its deadline; when
//             it passes the job submits nothing more, aborts what is in flight, keeps the
//             records of finished requests and writes a "batch_expired" error record for
//             every other one --split--> expired (expired_at set). A batch still queued when
//             its window ends goes before the others, once the running batch is done;
//             one whose window ended while the server was down expires on restart.
//   Finalizing sets request_counts and usage from the journal; a journal with
//   "batch_expired" records makes the batch expired rather than completed, so a
//   restart in the middle of finalizing ends in the same state.
//   shutdown(): the running jobs stop and their batches stay in_progress; start() after a
//               restart resumes them from their journals.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "batch/batch_job.h"
#include "server/batch_api/batch_store.h"
#include "server/batch_api/file_store.h"

namespace db {
class Engine;
class ModelBundle;
}  // namespace db

namespace db::api {
class ApiError;
}  // namespace db::api

namespace db::server {

// The 404 for a batch id that does not exist (or that the caller may not see).
api::ApiError no_such_batch(const std::string& id);

struct BatchRunnerOptions {
  std::string model_name;       // "model" in responses of requests that name none
  int64_t max_context = 0;      // the model's context length in tokens
  size_t max_in_flight = 0;     // requests of the running batch in the engine at once, at most (0: twice the
                                // engine's max_num_seqs: enough to keep it full, few enough that the batch
                                // adds little to the engine's waiting queue, which live admission watches)
  int priority = 2;             // engine priority of batch requests (2: background)
  size_t max_concurrent = 2;    // batches running at once (at least 1)
};

class BatchRunner {
 public:
  BatchRunner(Engine& engine, const ModelBundle& bundle, BatchStore& batches, FileStore& files,
              BatchRunnerOptions opts);
  ~BatchRunner();  // shutdown()
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // Queues every batch that is not finished, oldest first, and starts the threads.
  void start();
  // Queues a batch just created (validating).
  void enqueue(const std::string& id);
  // Cancels batch `id` and returns it as it is now. Throws api::ApiError: 404 for an
  // unknown id, 400 when it is finalizing or finished.
  BatchRecord cancel(const std::string& id);
  // Batch `id` with live request counts when it is running; nullopt when unknown.
  std::optional<BatchRecord> current(const std::string& id) const;
  // Stops the running jobs (their batches stay resumable) and joins the threads. Idempotent.
  void shutdown();
  // Blocks until the queue is empty and nothing runs, or `timeout_s` passed; true when idle.
  bool wait_idle(double timeout_s);

 private:
  // What the runner keeps about a batch while a thread processes it.
  struct Running {
    std::atomic<bool> stop{false};   // tells its job to stop
    batch::BatchCounters counters;   // live counts of its job
    bool counters_live = false;      // counters describe the batch
  };

  void loop();  // one worker thread
  // Takes the next batch off the queue: the first whose window has ended, else the oldest.
  std::string next_in_queue();
  void process(const std::string& id, Running& run);
  void run_job(const std::string& id, Running& run);
  void finalize(const std::string& id, BatchStatus to);
  void fail(const std::string& id, const std::string& message);
  // Applies `change` to the stored batch and saves it, under the state lock; returns it.
  BatchRecord update(const std::string& id, const std::function<void(BatchRecord&)>& change);

  Engine& engine_;
  const ModelBundle& bundle_;
  BatchStore& batches_;
  FileStore& files_;
  BatchRunnerOptions opts_;

  mutable std::mutex mu_;             // guards everything below and every read-modify-save of a batch
  std::condition_variable cv_;
  std::deque<std::string> queue_;     // batches waiting for the runner, FIFO
  std::map<std::string, std::unique_ptr<Running>> running_;  // the batches being processed
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace db::server

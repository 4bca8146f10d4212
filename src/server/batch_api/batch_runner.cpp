#include "server/batch_api/batch_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "api/api_error.h"
#include "api/response.h"
#include "engine/engine.h"
#include "server/batch_api/journal_split.h"
#include "util/error.h"

namespace db::server {

api::ApiError no_such_batch(const std::string& id) {
  return api::ApiError("No batch found with id '" + id + "'.", "batch_id", "batch_not_found", 404);
}

BatchRunner::BatchRunner(Engine& engine, const ModelBundle& bundle, BatchStore& batches, FileStore& files,
                         BatchRunnerOptions opts)
    : engine_(engine), bundle_(bundle), batches_(batches), files_(files), opts_(std::move(opts)) {}

BatchRunner::~BatchRunner() { shutdown(); }

void BatchRunner::start() {
  std::vector<BatchRecord> all = batches_.list();
  std::reverse(all.begin(), all.end());  // oldest first
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const BatchRecord& b : all)
      if (!is_terminal(b.status)) queue_.push_back(b.id);
  }
  for (size_t i = 0; i < std::max<size_t>(opts_.max_concurrent, 1); ++i) threads_.emplace_back([this] { loop(); });
}

void BatchRunner::enqueue(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(id);
  }
  cv_.notify_all();
}

void BatchRunner::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [id, run] : running_) run->stop = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

bool BatchRunner::wait_idle(double timeout_s) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::duration<double>(timeout_s),
                      [&] { return queue_.empty() && running_.empty(); });
}

BatchRecord BatchRunner::update(const std::string& id, const std::function<void(BatchRecord&)>& change) {
  std::optional<BatchRecord> b = batches_.get(id);
  if (!b) throw no_such_batch(id);
  change(*b);
  batches_.save(*b);
  return *b;
}

std::optional<BatchRecord> BatchRunner::current(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<BatchRecord> b = batches_.get(id);
  const auto run = running_.find(id);
  if (b && run != running_.end() && run->second->counters_live && !is_terminal(b->status)) {
    const batch::BatchCounters& c = run->second->counters;
    b->counts.total = static_cast<int64_t>(c.total.load());
    b->counts.completed = static_cast<int64_t>(c.completed.load());
    b->counts.failed = static_cast<int64_t>(c.failed.load());
  }
  return b;
}

BatchRecord BatchRunner::cancel(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<BatchRecord> b = batches_.get(id);
  if (!b) throw no_such_batch(id);
  const int64_t now = api::unix_time_now();
  switch (b->status) {
    case BatchStatus::Validating:  // not started: nothing to stop or split
      queue_.erase(std::remove(queue_.begin(), queue_.end(), id), queue_.end());
      return update(id, [&](BatchRecord& r) { transition(r, BatchStatus::Cancelled, now); });
    case BatchStatus::InProgress:
      if (const auto run = running_.find(id); run != running_.end()) run->second->stop = true;
      return update(id, [&](BatchRecord& r) { transition(r, BatchStatus::Cancelling, now); });
    case BatchStatus::Cancelling:
      return *b;
    default:
      throw api::ApiError(std::string("Cannot cancel a batch with status '") + batch_status_name(b->status) + "'.",
                          "batch_id", "batch_not_cancellable", 400);
  }
}

void BatchRunner::loop() {
  while (true) {
    std::string id;
    Running* run = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      id = next_in_queue();
      run = running_.emplace(id, std::make_unique<Running>()).first->second.get();
    }
    try {
      process(id, *run);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[deepbatch serve] batch %s: %s\n", id.c_str(), e.what());
      if (!stopping_) {
        try {
          fail(id, e.what());
        } catch (const std::exception& e2) {
          std::fprintf(stderr, "[deepbatch serve] batch %s: cannot record the failure: %s\n", id.c_str(), e2.what());
        }
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_.erase(id);
    }
    cv_.notify_all();
  }
}

std::string BatchRunner::next_in_queue() {
  const int64_t now = api::unix_time_now();
  auto pick = queue_.begin();
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    const std::optional<BatchRecord> b = batches_.get(*it);
    if (b && expires_at(*b) <= now) {
      pick = it;
      break;
    }
  }
  std::string id = *pick;
  queue_.erase(pick);
  return id;
}

void BatchRunner::process(const std::string& id, Running& run) {
  BatchStatus status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<BatchRecord> b = batches_.get(id);
    if (!b || is_terminal(b->status)) return;
    if (b->status == BatchStatus::Validating)
      *b = update(id, [](BatchRecord& r) { transition(r, BatchStatus::InProgress, api::unix_time_now()); });
    status = b->status;
  }
  if (status == BatchStatus::InProgress) {
    run_job(id, run);
    return;
  }
  finalize(id, status == BatchStatus::Cancelling ? BatchStatus::Cancelled : BatchStatus::Completed);
}

void BatchRunner::run_job(const std::string& id, Running& run) {
  batch::BatchJobOptions job;
  job.input_path = batches_.input_path(id);
  job.output_path = batches_.journal_path(id);
  job.model_name = opts_.model_name;
  job.max_context = opts_.max_context;
  job.max_in_flight =
      opts_.max_in_flight > 0 ? opts_.max_in_flight : 2 * static_cast<size_t>(engine_.config().max_num_seqs);
  job.priority = opts_.priority;
  job.stop = &run.stop;
  job.counters = &run.counters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::optional<BatchRecord> b = batches_.get(id);  // the last saved counts until the job reads its journal
    if (b) job.deadline = std::chrono::system_clock::from_time_t(static_cast<std::time_t>(expires_at(*b)));
    run.counters.total = b ? static_cast<size_t>(b->counts.total) : 0;
    run.counters.completed = b ? static_cast<size_t>(b->counts.completed) : 0;
    run.counters.failed = b ? static_cast<size_t>(b->counts.failed) : 0;
    run.counters_live = true;
    job.tenant = b ? b->owner : "";
  }
  const batch::BatchSummary summary = batch::run_batch_job(engine_, bundle_, job);
  if (summary.skipped > 0)
    std::fprintf(stderr, "[deepbatch serve] batch %s: resumed, %zu records were already done\n", id.c_str(),
                 summary.skipped);
  BatchStatus next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const BatchRecord b = update(id, [&](BatchRecord& r) {
      r.counts.total = static_cast<int64_t>(run.counters.total.load());
      r.counts.completed = static_cast<int64_t>(run.counters.completed.load());
      r.counts.failed = static_cast<int64_t>(run.counters.failed.load());
      if (r.status == BatchStatus::InProgress && !summary.stopped)
        transition(r, BatchStatus::Finalizing, api::unix_time_now());
    });
    run.counters_live = false;
    if (stopping_ && b.status != BatchStatus::Finalizing) return;  // resumes after a restart
    next = b.status == BatchStatus::Cancelling ? BatchStatus::Cancelled : BatchStatus::Completed;
  }
  finalize(id, next);
}

void BatchRunner::finalize(const std::string& id, BatchStatus to) {
  BatchRecord b;
  {
    std::lock_guard<std::mutex> lock(mu_);
    b = update(id, [](BatchRecord& r) {
      if (r.reserved_output_file_id.empty()) r.reserved_output_file_id = api::new_response_id("file-");
      if (r.reserved_error_file_id.empty()) r.reserved_error_file_id = api::new_response_id("file-");
    });
  }
  const SplitJournal split = split_journal(batches_.journal_path(id));
  std::optional<std::string> output_id, error_id;
  if (split.completed > 0)
    output_id =
        files_.create(id + "_output.jsonl", "batch_output", split.output, b.reserved_output_file_id, b.owner).id;
  if (split.failed > 0)
    error_id = files_.create(id + "_error.jsonl", "batch_output", split.errors, b.reserved_error_file_id, b.owner).id;
  // The journal says whether the window ended first (see the header).
  if (to == BatchStatus::Completed && split.expired > 0) to = BatchStatus::Expired;
  std::lock_guard<std::mutex> lock(mu_);
  update(id, [&](BatchRecord& r) {
    r.output_file_id = output_id;
    r.error_file_id = error_id;
    r.counts.completed = split.completed;
    r.counts.failed = split.failed;
    r.usage = BatchUsage{split.input_tokens, split.output_tokens};
    transition(r, to, api::unix_time_now());
  });
}

void BatchRunner::fail(const std::string& id, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  update(id, [&](BatchRecord& r) {
    if (is_terminal(r.status)) return;
    if (r.status == BatchStatus::Validating) transition(r, BatchStatus::InProgress, api::unix_time_now());
    r.error_code = "batch_failed";
    r.error_message = message;
    transition(r, BatchStatus::Failed, api::unix_time_now());
  });
}

}  // namespace db::server

#include "batch/batch_job.h"

#include <chrono>
#include <cstdio>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "api/api_error.h"
#include "api/openai_request.h"
#include "api/timeout_error.h"
#include "batch/batch_input.h"
#include "batch/batch_plan.h"
#include "batch/batch_record.h"
#include "bundle/model_bundle.h"
#include "engine/engine.h"
#include "util/error.h"

namespace db::batch {

namespace {

using Clock = std::chrono::steady_clock;

// One API request on its way through the engine (one engine request per prompt).
struct Group {
  Group(const BatchItem& it, const api::PreparedRequest& prepared) : item(&it), result(prepared) {}
  const BatchItem* item;
  api::GenerationResult result;   // guarded by BatchJob::mu_ until completed
  std::vector<RequestId> ids;     // engine ids of the submitted parts
  std::string submit_error;       // set when the engine refused a part
  double own_timeout = 0;         // the body's "timeout" (0: none)
  bool batch_deadline = false;    // the job's deadline, not own_timeout, is the one its parts were given
  bool completed = false;         // queued for writing
};

class BatchJob {
 public:
  BatchJob(Engine& engine, const ModelBundle& bundle, const BatchJobOptions& opts)
      : engine_(engine), bundle_(bundle), opts_(opts), writer_(opts.output_path, opts.sync),
        progress_(opts.progress_out, opts.progress_tty) {}

  BatchSummary run();

 private:
  void write_bad_lines(const BatchPlan& plan);
  void start(const BatchItem& item);
  void submit_parts(Group* g, api::PreparedRequest& prepared);
  void on_output(Group* g, size_t part, const SampleOutput& out, const RequestStats& stats, bool final);
  void finish(Group* g);
  void write_error(const BatchItem& item, const std::string& code, const std::string& message);
  void write_expired(const BatchItem& item, const char* what);
  void drain_until_idle();
  void abort_in_flight();
  void stop_and_keep_finished();
  void expire_rest(const std::vector<const BatchItem*>& pending, size_t next);
  bool stop_requested() const { return opts_.stop && opts_.stop->load(); }
  // Seconds left until opts_.deadline (may be <= 0); only when one is set.
  double seconds_left() const {
    return std::chrono::duration<double>(*opts_.deadline - std::chrono::system_clock::now()).count();
  }
  bool deadline_passed() const { return opts_.deadline && seconds_left() <= 0; }
  void count_record(bool ok) {
    if (opts_.counters) ++(ok ? opts_.counters->completed : opts_.counters->failed);
  }
  ProgressSnapshot snapshot() const;

  Engine& engine_;
  const ModelBundle& bundle_;
  const BatchJobOptions& opts_;
  JournalWriter writer_;
  ProgressReporter progress_;
  BatchSummary summary_;
  bool expiring_ = false;  // the deadline passed: aborted requests get "batch_expired" records
  size_t total_ = 0, done_ = 0, failed_this_run_ = 0;
  int64_t generated_at_start_ = 0;
  int64_t masks_at_start_ = 0;
  double mask_seconds_at_start_ = 0;
  SpecDecodeStats spec_at_start_;
  Clock::time_point start_ = Clock::now();

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<Group*, std::unique_ptr<Group>> groups_;  // in flight
  std::deque<Group*> completed_;                               // finished, not yet written
  size_t open_parts_ = 0;                                      // submitted parts without their final output
};

void BatchJob::write_bad_lines(const BatchPlan& plan) {
  for (size_t i : plan.unrecorded_errors) {
    const LineError& e = plan.input.errors[i];
    writer_.append(error_record(e.custom_id, e.code, e.message));
    ++summary_.failed;
    count_record(false);
  }
}

void BatchJob::write_error(const BatchItem& item, const std::string& code, const std::string& message) {
  writer_.append(error_record(item.custom_id, code, "line " + std::to_string(item.line_no) + ": " + message));
  ++summary_.failed;
  ++failed_this_run_;
  ++done_;
  count_record(false);
}

void BatchJob::write_expired(const BatchItem& item, const char* what) {
  write_error(item, kBatchExpiredCode, std::string("the batch's completion window ended before this request ") + what);
  ++summary_.expired;
}

void BatchJob::start(const BatchItem& item) {
  api::PreparedRequest prepared;
  try {
    prepared = api::prepare_request(item.request, bundle_, opts_.max_context);
  } catch (const api::ApiError& e) {
    write_error(item, e.code().empty() ? "invalid_request" : e.code(), std::string("invalid body: ") + e.what());
    return;
  } catch (const Error& e) {
    write_error(item, "invalid_request", std::string("cannot prepare the request: ") + e.what());
    return;
  }
  if (opts_.priority)
    for (EngineRequest& part : prepared.parts) part.priority = *opts_.priority;
  for (EngineRequest& part : prepared.parts) part.tenant = opts_.tenant;
  auto owned = std::make_unique<Group>(item, prepared);
  Group* g = owned.get();
  g->own_timeout = api::common_fields(item.request).timeout;
  if (opts_.deadline) {
    const double left = seconds_left();
    if (left <= 0) {
      write_expired(item, "ran");
      return;
    }
    g->batch_deadline = g->own_timeout <= 0 || left < g->own_timeout;
    if (g->batch_deadline)
      for (EngineRequest& part : prepared.parts) part.timeout_seconds = left;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    groups_.emplace(g, std::move(owned));
  }
  submit_parts(g, prepared);
}

void BatchJob::submit_parts(Group* g, api::PreparedRequest& prepared) {
  for (size_t part = 0; part < prepared.parts.size(); ++part) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++open_parts_;
    }
    try {
      const RequestId id = engine_.submit(std::move(prepared.parts[part]),
                                          [this, g, part](RequestId, const SampleOutput& out, const RequestStats& st,
                                                          bool final) { on_output(g, part, out, st, final); });
      std::lock_guard<std::mutex> lock(mu_);
      g->ids.push_back(id);
    } catch (const Error& e) {
      std::vector<RequestId> to_abort;
      {
        std::lock_guard<std::mutex> lock(mu_);
        --open_parts_;
        g->submit_error = e.what();
        for (size_t rest = part; rest < prepared.parts.size(); ++rest) g->result.close_part(rest);
        to_abort = g->ids;
        if (g->result.done() && !g->completed) {
          g->completed = true;
          completed_.push_back(g);
        }
      }
      for (RequestId id : to_abort) engine_.abort(id);
      cv_.notify_one();
      return;
    }
  }
}

void BatchJob::on_output(Group* g, size_t part, const SampleOutput& out, const RequestStats& stats, bool final) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool done = g->result.add(part, out, stats, final);
    if (final) --open_parts_;
    if (done && !g->completed) {
      g->completed = true;
      completed_.push_back(g);
    }
  }
  if (final) cv_.notify_one();
}

void BatchJob::finish(Group* g) {
  const BatchItem& item = *g->item;
  const api::GenerationResult& r = g->result;
  const std::optional<api::ApiError> timed_out = api::timeout_error(r, g->own_timeout);
  bool aborted = false;
  for (const api::ChoiceOutput& c : r.choices()) aborted = aborted || c.finish == FinishReason::Abort;
  if (!g->submit_error.empty()) {
    write_error(item, "engine_rejected", "the engine refused the request: " + g->submit_error);
  } else if (timed_out && timed_out->code() == "request_timeout" && g->batch_deadline) {
    write_expired(item, "finished");
  } else if (timed_out) {
    write_error(item, timed_out->code(), timed_out->what());
  } else if (aborted && expiring_) {
    write_expired(item, "finished");
  } else if (r.failed()) {
    write_error(item, "generation_failed", "generation did not complete: " + r.failure_message());
  } else {
    api::ResponseMeta meta;
    meta.created = api::unix_time_now();
    meta.model = api::common_fields(item.request).model;
    if (meta.model.empty()) meta.model = opts_.model_name;
    meta.split_reasoning = bundle_.splits_reasoning();
    meta.tool_format = bundle_.tool_call_format();
    writer_.append(success_record(item.custom_id, api::build_response(item.request, r, bundle_.tokenizer(), meta)));
    ++summary_.ok;
    ++done_;
    count_record(true);
  }
  summary_.prompt_tokens += r.prompt_tokens();
  summary_.cached_prompt_tokens += r.cached_prompt_tokens();
  summary_.generated_tokens += r.completion_tokens();
}

ProgressSnapshot BatchJob::snapshot() const {
  ProgressSnapshot s;
  s.done = done_;
  s.total = total_;
  s.failed = failed_this_run_;
  s.generated_tokens = engine_.stats().generated_tokens - generated_at_start_;
  s.elapsed_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  return s;
}

void BatchJob::abort_in_flight() {
  std::vector<RequestId> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [g, owned] : groups_) ids.insert(ids.end(), g->ids.begin(), g->ids.end());
  }
  for (RequestId id : ids) engine_.abort(id);
  drain_until_idle();
}

// Aborts what is in flight and records only the requests that finished on their
// own; the aborted ones stay unrecorded so that a rerun runs them.
void BatchJob::stop_and_keep_finished() {
  abort_in_flight();
  std::deque<Group*> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready.swap(completed_);
  }
  for (Group* g : ready)
    if (g->submit_error.empty() && !g->result.failed()) finish(g);
  std::lock_guard<std::mutex> lock(mu_);
  groups_.clear();
  summary_.stopped = true;
}

// The deadline passed: aborts what is in flight, records what finished (aborted and
// timed-out requests as expired), and writes an expired record for each request that
// never ran.
void BatchJob::expire_rest(const std::vector<const BatchItem*>& pending, size_t next) {
  expiring_ = true;
  abort_in_flight();
  std::deque<Group*> ready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready.swap(completed_);
  }
  for (Group* g : ready) finish(g);
  {
    std::lock_guard<std::mutex> lock(mu_);
    groups_.clear();
  }
  for (size_t i = next; i < pending.size(); ++i) write_expired(*pending[i], "ran");
}

void BatchJob::drain_until_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return open_parts_ == 0; });
}

BatchSummary BatchJob::run() {
  const BatchPlan plan =
      plan_batch(opts_.lines ? parse_numbered_lines(*opts_.lines) : read_batch_input(opts_.input_path), opts_.output_path);
  const JournalState& state = plan.journal;
  if (opts_.progress_out && state.records > 0) {
    std::fprintf(opts_.progress_out, "[deepbatch run] resuming: %zu records already in %s", state.records,
                 opts_.output_path.c_str());
    if (state.truncated_bytes > 0)
      std::fprintf(opts_.progress_out, " (cut a torn last line of %llu bytes)",
                   static_cast<unsigned long long>(state.truncated_bytes));
    std::fputc('\n', opts_.progress_out);
  }
  summary_.input_lines = plan.input.lines;
  summary_.skipped = plan.skipped;
  if (opts_.counters) {
    opts_.counters->total = plan.input.lines;
    opts_.counters->completed = state.records - state.error_records;
    opts_.counters->failed = state.error_records;
  }
  const EngineStats at_start = engine_.stats();
  generated_at_start_ = at_start.generated_tokens;
  masks_at_start_ = at_start.constraint_masks;
  mask_seconds_at_start_ = at_start.constraint_mask_seconds;
  spec_at_start_ = at_start.spec;
  write_bad_lines(plan);

  std::vector<const BatchItem*> pending;
  for (size_t i : plan.pending) pending.push_back(&plan.input.items[i]);
  total_ = pending.size();

  size_t next = 0;
  try {
    while (true) {
      if (stop_requested()) {
        stop_and_keep_finished();
        break;
      }
      if (deadline_passed()) {
        expire_rest(pending, next);
        break;
      }
      // Submit up to the window, a bounded number per round so that progress keeps flowing.
      for (size_t started = 0; started < 256 && next < pending.size(); ++started) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (groups_.size() >= opts_.max_in_flight) break;
        }
        start(*pending[next++]);
      }
      std::deque<Group*> ready;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (groups_.empty() && next == pending.size()) break;
        const bool can_start = next < pending.size() && groups_.size() < opts_.max_in_flight;
        if (!can_start)
          cv_.wait_for(lock, std::chrono::milliseconds(200), [&] { return !completed_.empty(); });
        ready.swap(completed_);
      }
      for (Group* g : ready) {
        finish(g);
        std::lock_guard<std::mutex> lock(mu_);
        groups_.erase(g);
      }
      writer_.tick();
      progress_.update(snapshot());
    }
  } catch (...) {
    abort_in_flight();
    throw;
  }
  writer_.sync();
  progress_.finish(snapshot());
  summary_.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  const EngineStats end = engine_.stats();
  summary_.constraint_masks = end.constraint_masks - masks_at_start_;
  summary_.constraint_mask_seconds = end.constraint_mask_seconds - mask_seconds_at_start_;
  summary_.spec_proposer = end.spec.proposer;
  summary_.spec_drafts = end.spec.num_drafts - spec_at_start_.num_drafts;
  summary_.spec_draft_tokens = end.spec.num_draft_tokens - spec_at_start_.num_draft_tokens;
  summary_.spec_accepted_tokens = end.spec.num_accepted_tokens - spec_at_start_.num_accepted_tokens;
  return summary_;
}

}  // namespace

BatchSummary run_batch_job(Engine& engine, const ModelBundle& bundle, const BatchJobOptions& opts) {
  if (opts.max_context <= 0) throw Error("run_batch_job: max_context must be positive");
  BatchJob job(engine, bundle, opts);
  return job.run();
}

}  // namespace db::batch

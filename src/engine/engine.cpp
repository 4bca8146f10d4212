#include "engine/engine.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "bundle/model_bundle.h"
#include "engine/blocking_queue.h"
#include "engine/engine_core.h"
#include "engine/output_processor.h"
#include "util/error.h"

namespace db {

namespace {

// Work for the step thread, queued by submit(), abort() and the output thread.
struct Command {
  enum class Kind { Add, AbortGroup, FinishSequence };
  Kind kind = Kind::Add;
  RequestParams params;  // Add
  RequestId id = 0;      // AbortGroup: the request; FinishSequence: the sequence
};

// Index of a priority class in per-class counts (validated requests have 0..2).
size_t priority_slot(int priority) { return static_cast<size_t>(std::clamp(priority, 0, 2)); }

}  // namespace

struct Engine::Impl {
  Impl(ModelBundle& bundle, EngineConfig c)
      : cfg(with_moe_batch_defaults(bundle.model(), bundle.weight_read_bytes(), std::move(c))),
        core(bundle.model(), bundle.tokenizer(), cfg, bundle.weight_read_bytes()),
        output(
            bundle.tokenizer(), [this](RequestId seq) { push_command({Command::Kind::FinishSequence, {}, seq}); },
            [this] { group_done(); }) {
    stats = core.stats();
    step_thread = std::thread([this] { step_loop(); });
    output_thread = std::thread([this] { output_loop(); });
  }

  void push_command(Command c) {
    {
      std::lock_guard<std::mutex> lock(mu);
      commands.push_back(std::move(c));
      step_idle = false;
    }
    step_cv.notify_one();
  }

  void group_done() {
    {
      std::lock_guard<std::mutex> lock(mu);
      --pending_groups;
    }
    idle_cv.notify_all();
  }

  void apply(Command& c, std::vector<OutputEvent>& events) {
    switch (c.kind) {
      case Command::Kind::Add: core.add_request(c.params); break;
      case Command::Kind::AbortGroup: {
        core.finish_group(c.id, RequestStatus::FinishedAborted);
        OutputEvent e;
        e.kind = OutputEvent::Kind::Aborted;
        e.group_id = c.id;
        e.time = EngineClock::now();
        events.push_back(std::move(e));
        break;
      }
      case Command::Kind::FinishSequence: core.finish_sequence(c.id); break;
    }
  }

  void fail_all(const std::string& error, std::vector<OutputEvent>& events) {
    for (RequestId g : core.live_groups()) {
      core.finish_group(g, RequestStatus::FinishedError);
      OutputEvent e;
      e.kind = OutputEvent::Kind::Failed;
      e.group_id = g;
      e.time = EngineClock::now();
      e.error = error;
      events.push_back(std::move(e));
    }
  }

  void step_loop() {
    std::vector<Command> cmds;
    std::vector<OutputEvent> events;
    for (;;) {
      bool stop = false;
      {
        std::unique_lock<std::mutex> lock(mu);
        if (commands.empty() && !core.has_unfinished() && !stopping) {
          step_idle = true;
          idle_cv.notify_all();
          step_cv.wait(lock, [this] { return !commands.empty() || stopping; });
        }
        step_idle = false;
        cmds.swap(commands);
        stop = stopping;
      }
      try {
        for (Command& c : cmds) apply(c, events);
        if (stop) {
          for (RequestId g : core.live_groups()) {
            Command abort{Command::Kind::AbortGroup, {}, g};
            apply(abort, events);
          }
        } else if (core.has_unfinished()) {
          core.enforce_limits(events);
          if (core.has_unfinished()) {
            const StepRecord rec = core.step(events);
            if (rec.tokens > 0) {
              std::lock_guard<std::mutex> lock(observer_mu);
              if (step_observer) step_observer(rec);
            }
          }
        }
      } catch (const std::exception& ex) {
        fail_all(std::string("engine step failed: ") + ex.what(), events);
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        // In place: the router counts reuse their buffers. The pool scans (they walk the
        // whole pool) run when the engine goes idle, and while busy only when asked for,
        // at most every kPoolScanInterval.
        bool scan = !core.has_unfinished();
        if (!scan && pool_scans_while_busy.load(std::memory_order_relaxed)) {
          const auto now = EngineClock::now();
          scan = now - last_pool_scan >= kPoolScanInterval;
          if (scan) last_pool_scan = now;
        }
        core.read_stats(stats, scan);
        for (const Command& c : cmds)  // now counted by the scheduler itself
          if (c.kind == Command::Kind::Add) --unpublished_adds[priority_slot(c.params.priority)];
      }
      cmds.clear();
      for (OutputEvent& e : events) output_queue.push(std::move(e));
      events.clear();
      if (stop) break;
    }
    OutputEvent last;
    last.kind = OutputEvent::Kind::Shutdown;
    output_queue.push(std::move(last));
  }

  void output_loop() {
    for (;;) {
      OutputEvent e = output_queue.pop();
      if (e.kind == OutputEvent::Kind::Shutdown) break;
      output.handle(e);
    }
  }

  EngineConfig cfg;
  EngineCore core;          // the step thread's, once constructed
  OutputProcessor output;   // the output thread's
  BlockingQueue<OutputEvent> output_queue;
  std::atomic<RequestId> next_id{1};

  std::mutex mu;                    // guards everything below
  std::condition_variable step_cv;  // wakes the step thread
  std::condition_variable idle_cv;  // wakes wait_idle()
  std::vector<Command> commands;
  bool stopping = false;
  bool step_idle = true;            // the step thread sleeps with nothing to do
  int64_t pending_groups = 0;       // requests whose final output has not returned yet
  EngineStats stats;                // the scheduler's counts as of the last step
  std::array<int64_t, 3> unpublished_adds{};  // submitted requests not yet in `stats`, per priority class

  std::atomic<bool> pool_scans_while_busy{false};
  EngineClock::time_point last_pool_scan{};  // step thread only
  static constexpr std::chrono::milliseconds kPoolScanInterval{200};
  std::mutex observer_mu;  // guards step_observer (not `mu`: the observer may read stats())
  StepObserver step_observer;

  std::thread step_thread, output_thread;
};

Engine::Engine(ModelBundle& bundle, EngineConfig cfg) : impl_(std::make_unique<Impl>(bundle, std::move(cfg))) {}

Engine::~Engine() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->step_cv.notify_one();
  impl_->step_thread.join();
  impl_->output_thread.join();
}

RequestId Engine::submit(EngineRequest req, OutputCallback on_output) {
  validate_request(req, impl_->core.limits());
  if (!on_output) throw Error("submit: an output callback is required");
  const RequestId id = impl_->next_id.fetch_add(static_cast<RequestId>(req.n));

  auto info = std::make_shared<GroupInfo>();
  info->id = id;
  info->n = req.n;
  info->prompt_tokens = static_cast<int32_t>(req.prompt.size());
  info->stop = req.stop;
  info->stop_token_ids = req.stop_token_ids;
  info->skip_special_tokens = req.skip_special_tokens;
  info->callback = std::move(on_output);
  info->submit_time = EngineClock::now();
  const double submitted_s = engine_seconds(info->submit_time);

  Command add;
  add.kind = Command::Kind::Add;
  add.params.id = id;
  add.params.prompt = std::move(req.prompt);
  add.params.sampling = req.sampling;
  add.params.sampler_state = SamplerState::for_request(req.sampling, 0);
  add.params.max_tokens = req.max_tokens;
  add.params.num_samples = req.n;
  add.params.stop_token_ids = std::move(req.stop_token_ids);
  add.params.ignore_eos = req.ignore_eos;
  add.params.priority = req.priority;
  add.params.tenant = std::move(req.tenant);
  add.params.arrival_time = submitted_s;
  add.params.deadline = req.timeout_seconds > 0 ? submitted_s + req.timeout_seconds : 0;

  OutputEvent reg;
  reg.kind = OutputEvent::Kind::Register;
  reg.group_id = id;
  reg.group = std::move(info);
  reg.time = EngineClock::now();
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopping) throw Error("submit: the engine is shutting down");
    ++impl_->pending_groups;
    ++impl_->unpublished_adds[priority_slot(add.params.priority)];
    impl_->output_queue.push(std::move(reg));  // before the step thread can see the request
    impl_->commands.push_back(std::move(add));
    impl_->step_idle = false;
  }
  impl_->step_cv.notify_one();
  return id;
}

void Engine::abort(RequestId id) { impl_->push_command({Command::Kind::AbortGroup, {}, id}); }

void Engine::wait_idle() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->idle_cv.wait(lock, [this] {
    return impl_->pending_groups == 0 && impl_->step_idle && impl_->commands.empty();
  });
}

EngineStats Engine::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  EngineStats s = impl_->stats;
  for (int p = 0; p < 3; ++p) {  // a request submitted since the last step is waiting already
    s.waiting += impl_->unpublished_adds[p];
    s.waiting_by_priority[p] += impl_->unpublished_adds[p];
  }
  return s;
}

const EngineConfig& Engine::config() const { return impl_->cfg; }

void Engine::set_pool_scans_while_busy(bool on) {
  impl_->pool_scans_while_busy.store(on, std::memory_order_relaxed);
}

void Engine::set_step_observer(StepObserver observer) {
  std::lock_guard<std::mutex> lock(impl_->observer_mu);
  impl_->step_observer = std::move(observer);
}

const std::string& Engine::kv_cache_summary() const { return impl_->core.kv_summary(); }  // immutable after start

}  // namespace db

#include "offline_bench/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "bundle/model_bundle.h"
#include "tokenizer/tokenizer.h"

namespace db::bench {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Outputs of the measured requests, shared by the engine's output thread and the bench thread.
struct Tracker {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<RequestRecord> records;  // by request index
  std::vector<char> has_token;         // by request index: a token arrived
  size_t wave_size = 0;                // requests of the wave now running
  size_t finished = 0;                 // of them, finished
  size_t with_token = 0;               // of them, with a token (their prompt is computed)
  int64_t wave_tokens = 0;             // tokens the wave received so far
  int64_t tokens_when_all_started = 0; // wave_tokens when the last prompt of the wave was computed
  Clock::time_point all_started, last_final;

  OutputCallback callback(size_t index) {
    return [this, index](RequestId, const SampleOutput& out, const RequestStats& stats, bool final) {
      const Clock::time_point now = Clock::now();
      std::lock_guard<std::mutex> lock(mu);
      wave_tokens += static_cast<int64_t>(out.new_token_ids.size());
      if (!out.new_token_ids.empty() && !has_token[index]) {
        has_token[index] = 1;
        if (++with_token == wave_size) {
          all_started = now;
          tokens_when_all_started = wave_tokens;
        }
      }
      if (out.finish != FinishReason::None) records[index].finish = out.finish;
      if (!final) return;
      records[index].stats = stats;
      last_final = now;
      if (++finished == wave_size) cv.notify_all();
    };
  }
};

// Periodic samples of the engine's KV usage: peak and time-weighted mean.
class KvSampler {
 public:
  explicit KvSampler(const Engine& engine) : engine_(engine), last_(Clock::now()), usage_(engine.stats().kv_usage) {
    peak_ = usage_;
  }
  void sample() {
    const double usage = engine_.stats().kv_usage;
    const Clock::time_point now = Clock::now();
    const double dt = seconds_between(last_, now);
    weighted_ += usage_ * dt;
    elapsed_ += dt;
    usage_ = usage;
    last_ = now;
    peak_ = std::max(peak_, usage);
    ++samples_;
  }
  double peak() const { return peak_; }
  double mean() const { return elapsed_ > 0 ? weighted_ / elapsed_ : usage_; }
  int64_t samples() const { return samples_; }

 private:
  const Engine& engine_;
  Clock::time_point last_;
  double usage_ = 0, peak_ = 0, weighted_ = 0, elapsed_ = 0;
  int64_t samples_ = 0;
};

// Submits requests [begin, end) at once and waits for all of them, sampling KV usage meanwhile.
void run_wave(Engine& engine, Tracker& t, const std::vector<EngineRequest>& reqs, size_t begin, size_t end,
              KvSampler& kv, double interval_s) {
  {
    std::lock_guard<std::mutex> lock(t.mu);
    t.wave_size = end - begin;
    t.finished = t.with_token = 0;
    t.wave_tokens = t.tokens_when_all_started = 0;
  }
  for (size_t i = begin; i < end; ++i) engine.submit(reqs[i], t.callback(i));
  const auto interval = std::chrono::duration<double>(std::max(interval_s, 1e-4));
  std::unique_lock<std::mutex> lock(t.mu);
  while (t.finished < t.wave_size) {
    t.cv.wait_for(lock, interval);
    lock.unlock();
    kv.sample();
    lock.lock();
  }
}

void run_warmup(Engine& engine, const std::vector<BenchRequest>& warmup) {
  if (warmup.empty()) return;
  for (const EngineRequest& r : to_engine_requests(warmup, Phase::Mixed))
    engine.submit(r, [](RequestId, const SampleOutput&, const RequestStats&, bool) {});
  engine.wait_idle();
}

}  // namespace

std::vector<int32_t> prompt_token_pool(const Tokenizer& tokenizer) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < tokenizer.vocab_size(); ++i)
    if (tokenizer.kind(static_cast<int32_t>(i)) == TokenKind::Normal) ids.push_back(static_cast<int32_t>(i));
  return ids;
}

std::vector<EngineRequest> to_engine_requests(const std::vector<BenchRequest>& workload, Phase phase) {
  std::vector<EngineRequest> out;
  out.reserve(workload.size());
  for (const BenchRequest& b : workload) {
    EngineRequest r;
    r.prompt = b.prompt;
    r.sampling.temperature = 0;
    r.max_tokens = phase == Phase::Prefill ? 1 : b.max_tokens;
    r.ignore_eos = true;
    out.push_back(std::move(r));
  }
  return out;
}

RunMeasurements run_workload(ModelBundle& bundle, const RunConfig& cfg, const std::vector<BenchRequest>& workload) {
  const std::vector<EngineRequest> reqs = to_engine_requests(workload, cfg.phase);
  Tracker tracker;  // outlives the engine, whose destructor may still deliver outputs
  tracker.records.resize(reqs.size());
  tracker.has_token.assign(reqs.size(), 0);
  Engine engine(bundle, cfg.engine);
  run_warmup(engine, cfg.warmup);

  const EngineStats before = engine.stats();
  KvSampler kv(engine);
  RunMeasurements m;
  m.max_num_seqs = cfg.engine.max_num_seqs;
  m.phase = cfg.phase;
  const Clock::time_point start = Clock::now();
  const size_t wave = cfg.phase == Phase::Decode ? static_cast<size_t>(std::max(1, cfg.engine.max_num_seqs))
                                                 : std::max<size_t>(reqs.size(), 1);
  for (size_t begin = 0; begin < reqs.size(); begin += wave) {
    const size_t end = std::min(reqs.size(), begin + wave);
    run_wave(engine, tracker, reqs, begin, end, kv, cfg.sample_interval_s);
    std::lock_guard<std::mutex> lock(tracker.mu);
    if (tracker.with_token == tracker.wave_size) {
      m.decode_window_seconds += seconds_between(tracker.all_started, tracker.last_final);
      m.decode_window_tokens += tracker.wave_tokens - tracker.tokens_when_all_started;
    }
  }
  {
    std::lock_guard<std::mutex> lock(tracker.mu);
    m.wall_seconds = seconds_between(start, tracker.last_final);
    m.requests = tracker.records;
  }
  engine.wait_idle();
  kv.sample();
  const EngineStats after = engine.stats();
  m.computed_prompt_tokens = after.prompt_tokens - before.prompt_tokens;
  m.preemptions = after.preemptions - before.preemptions;
  m.steps = after.steps - before.steps;
  m.router = router_stats_delta(after.router, before.router);
  m.spec = make_spec_report(after.spec, before.spec);
  m.pool = make_pool_report(after, before);
  m.peak_kv_usage = kv.peak();
  m.mean_kv_usage = kv.mean();
  m.kv_samples = kv.samples();
  if (cfg.phase != Phase::Decode) m.decode_window_seconds = m.decode_window_tokens = 0;
  return m;
}

}  // namespace db::bench

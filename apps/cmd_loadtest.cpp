// `deepbatch loadtest`: drives an OpenAI-compatible server with a workload at a
// chosen arrival process and reports throughput, goodput and latency percentiles;
// with --find-capacity, searches the highest request rate that meets the SLOs.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "loadtest/capacity_finder.h"
#include "loadtest/http_driver.h"
#include "loadtest/measurement_window.h"
#include "loadtest/plot.h"
#include "loadtest/prompt_files.h"
#include "loadtest/report.h"
#include "loadtest/step_log.h"
#include "loadtest/step_sizing.h"
#include "util/error.h"

namespace db::cli {

namespace {

using namespace db::loadtest;

struct LoadtestOptions {
  std::string url = "http://127.0.0.1:8000";
  std::string api_key, model, endpoint = "chat";
  bool ignore_eos = false;
  double request_timeout = 600;
  int32_t num_requests = 200;
  std::string input_len = "128", output_len = "64", shared_prefix, prompts_file, sharegpt_file;
  uint64_t seed = 0;
  std::string arrival = "poisson";
  double rate = 1, burstiness = 1, duration = 0, warmup = 0, cooldown = 0;
  int32_t concurrency = 8;
  std::vector<std::string> slos;
  bool find_capacity = false;
  double start_rate = 1, precision = 0.05, min_step_s = 10, max_rate = 0, server_warmup_s = 5;
  int64_t step_requests = 0;  // 0 = as step_sizing.h's rule asks
  int64_t step_max_requests = -1;  // -1 = default_max_step_requests
  double confidence = 0.95;
  std::string output_json, plot;
};

std::vector<RequestSpec> load_pool(const LoadtestOptions& o) {
  if (!o.prompts_file.empty()) {  // lines without max_tokens ask for one draw of --output-len
    Rng rng(o.seed);
    return load_prompt_jsonl(o.prompts_file, draw_length(parse_length_dist(o.output_len, "--output-len"), rng)).requests;
  }
  if (!o.sharegpt_file.empty()) return load_sharegpt(o.sharegpt_file).requests;
  SyntheticWorkloadSpec w;
  w.num_requests = o.num_requests;
  w.input_len = parse_length_dist(o.input_len, "--input-len");
  w.output_len = parse_length_dist(o.output_len, "--output-len");
  w.seed = o.seed;
  if (!o.shared_prefix.empty()) {  // K:P:FRACTION
    const size_t a = o.shared_prefix.find(':'), b = o.shared_prefix.rfind(':');
    if (a == std::string::npos || a == b) throw Error("--shared-prefix: expected K:P:FRACTION, got '" + o.shared_prefix + "'");
    try {
      w.shared_prefix.num_prefixes = std::stoi(o.shared_prefix.substr(0, a));
      w.shared_prefix.prefix_tokens = std::stoi(o.shared_prefix.substr(a + 1, b - a - 1));
      w.shared_prefix.fraction = std::stod(o.shared_prefix.substr(b + 1));
    } catch (const std::logic_error&) {
      throw Error("--shared-prefix: expected K:P:FRACTION, got '" + o.shared_prefix + "'");
    }
  }
  validate(w);
  return make_synthetic_workload(w);
}

ArrivalSpec arrival_spec(const LoadtestOptions& o, double rate, uint64_t seed) {
  ArrivalSpec a;
  a.kind = o.arrival == "gamma"      ? ArrivalSpec::Kind::Gamma
           : o.arrival == "constant" ? ArrivalSpec::Kind::Constant
           : o.arrival == "closed"   ? ArrivalSpec::Kind::ClosedLoop
                                     : ArrivalSpec::Kind::Poisson;
  a.rate = rate;
  a.burstiness = o.burstiness;
  a.concurrency = o.concurrency;
  a.seed = seed;
  return a;
}

void print_progress(const DriveProgress& p) {
  const bool tty = ::isatty(STDERR_FILENO);
  std::fprintf(stderr, "%s%6.0f s: sent %lld, done %lld, failed %lld, in flight %lld%s", tty ? "\r" : "", p.elapsed_s,
               (long long)p.sent, (long long)p.finished, (long long)p.failed, (long long)p.in_flight, tty ? "" : "\n");
  std::fflush(stderr);
}

struct Measured {
  RunSummary summary;
  DriveOutcome outcome;
  std::vector<RequestResult> counted;  // the results the measurement window counts
  double duration_s = 0;               // the rates' denominator
};

// Sends `requests` at `arrivals`, then summarizes the ones the window counts.
Measured measure(const Target& target, const std::vector<RequestSpec>& requests, const ArrivalSpec& spec,
                 double max_send_s, double warmup, double cooldown, const std::vector<Slo>& slos) {
  std::unique_ptr<ArrivalProcess> arrivals = make_arrivals(spec);
  Measured m;
  m.outcome = drive(target, requests, *arrivals, max_send_s, print_progress);
  if (::isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
  MeasurementWindow w;
  w.run_start = 0;
  for (const RequestResult& r : m.outcome.results) w.run_end = std::max(w.run_end, r.start_time);
  w.warmup_s = warmup;
  w.cooldown_s = cooldown;
  for (const RequestResult& r : m.outcome.results)
    if (w.counts(r.start_time)) m.counted.push_back(r);
  m.duration_s = w.duration() > 0 ? w.duration() : m.outcome.wall_s;
  m.summary = summarize_run(m.counted, m.duration_s, slos);
  return m;
}

void print_summary(const RunSummary& s, const DriveOutcome& d) {
  std::printf("requests %lld (ok %lld, failed %lld), %.2f req/s, goodput %.2f req/s, %.1f input tok/s, %.1f output tok/s\n",
              (long long)s.requests, (long long)s.succeeded, (long long)s.failed, s.request_rate, s.goodput,
              s.input_tokens_per_s, s.output_tokens_per_s);
  std::printf("%-5s %9s %9s %9s %9s %9s %9s %9s  (ms)\n", "", "mean", "p50", "p90", "p95", "p99", "p99.9", "max");
  const auto row = [](const char* name, const Distribution& x) {
    std::printf("%-5s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", name, x.mean * 1e3, x.p50 * 1e3, x.p90 * 1e3,
                x.p95 * 1e3, x.p99 * 1e3, x.p999 * 1e3, x.max * 1e3);
  };
  row("TTFT", s.ttft);
  row("TPOT", s.tpot);
  row("ITL", s.itl);
  row("E2E", s.e2e);
  std::printf("ITL jitter: stddev %.1f ms, p99 - p50 %.1f ms\n", s.itl_jitter.stddev * 1e3,
              s.itl_jitter.p99_minus_p50 * 1e3);
  for (const auto& [type, n] : s.errors) std::printf("errors %s: %lld\n", type.c_str(), (long long)n);
  std::printf("load generator: %.1f s wall, %.1f s CPU (%.0f%% of one core)\n", d.wall_s, d.cpu_s,
              d.wall_s > 0 ? 100 * d.cpu_s / d.wall_s : 0);
}

// A report file removed when it goes out of scope: where --plot reads the report from
// when --output-json did not name one.
class TempReport {
 public:
  TempReport() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/deepbatch-loadtest-XXXXXX.json";
    const int fd = ::mkstemps(path_.data(), 5);
    if (fd < 0) throw Error(sys_error(path_, "cannot create a temporary report"));
    ::close(fd);
  }
  ~TempReport() { ::unlink(path_.c_str()); }
  TempReport(const TempReport&) = delete;
  TempReport& operator=(const TempReport&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Writes the report where --output-json says and draws it where --plot says.
void save_report(const LoadtestOptions& o, const OrderedJson& report) {
  if (!o.output_json.empty()) write_report(o.output_json, report);
  if (o.plot.empty()) return;
  std::optional<TempReport> temp;
  if (o.output_json.empty()) {
    temp.emplace();
    write_report(temp->path(), report);
  }
  plot_report(temp ? temp->path() : o.output_json, o.plot);
  std::printf("plot: %s\n", o.plot.c_str());
}

int run_loadtest(const LoadtestOptions& o) {
  if (!o.plot.empty()) {  // before the run, which may take long, rather than after it
    check_plot_path(o.plot);
    check_plotter();
  }
  Target target = parse_target_url(o.url);
  target.api_key = o.api_key;
  target.chat = o.endpoint == "chat";
  target.ignore_eos = o.ignore_eos;
  target.request_timeout_s = o.request_timeout;
  target.model = o.model.empty() ? first_model_id(target) : o.model;
  std::vector<Slo> slos;
  for (const std::string& s : o.slos) slos.push_back(parse_slo(s));
  validate(slos);
  const std::vector<RequestSpec> pool = load_pool(o);
  if (pool.empty()) throw Error("the workload has no requests");

  OrderedJson settings = {{"url", o.url}, {"model", target.model}, {"endpoint", o.endpoint},
                          {"ignore_eos", o.ignore_eos}, {"slos", to_json(slos)}, {"seed", o.seed}};
  if (!o.find_capacity) {
    const ArrivalSpec spec = arrival_spec(o, o.rate, o.seed);
    settings["arrivals"] = to_json(spec);
    const std::vector<RequestSpec> requests = sample_requests(pool, o.num_requests, o.seed);
    const Measured m = measure(target, requests, spec, o.duration, o.warmup, o.cooldown, slos);
    print_summary(m.summary, m.outcome);
    save_report(o, make_report(settings, m.summary));
    return 0;
  }

  if (slos.empty()) throw Error("--find-capacity needs at least one --slo");
  CapacityFinderConfig fc;
  fc.slos = slos;
  fc.start_rate = o.start_rate;
  fc.precision = o.precision;
  if (o.max_rate > 0) fc.max_rate = o.max_rate;
  fc.confidence = o.confidence;
  fc.max_step_requests =
      o.step_max_requests >= 0 ? o.step_max_requests : default_max_step_requests(slos, o.step_requests);
  CapacityFinder finder(fc);
  std::fprintf(stderr,
               "each step is judged by %g%% confidence intervals of its percentiles; a step they leave undecided "
               "gets more requests at its rate, up to %lld counted, then its point estimates decide\n",
               fc.confidence * 100, (long long)fc.max_step_requests);
  if (o.server_warmup_s > 0) {
    // Uncounted: the first step should not be the one that meets a cold server
    // (first-touched memory, empty caches).
    const int32_t n = std::max(1, static_cast<int32_t>(std::ceil(o.start_rate * o.server_warmup_s)));
    std::fprintf(stderr, "server warm-up: %.3f req/s, %d requests (not counted)\n", o.start_rate, n);
    measure(target, sample_requests(pool, n, o.seed + 7919), arrival_spec(o, o.start_rate, o.seed + 7919), 0, 0, 0,
            slos);
  }
  RunSummary last;
  for (int run = 0; !finder.done(); ++run) {
    const double rate = finder.proposed_rate();
    // A run sends a fixed number of requests (enough for its percentiles, see
    // step_sizing.h), however long the arrivals take to send them; a run that extends
    // an undecided step sends as many again.
    const double seconds = step_duration_s(rate, slos, o.min_step_s, o.step_requests);
    const int32_t n = static_cast<int32_t>(std::ceil(rate * seconds));
    const int step = static_cast<int>(finder.result().steps.size());
    std::fprintf(stderr, "step %d: %.3f req/s, %s%d requests (about %.0f s)\n", step, rate,
                 finder.extending() ? "adding " : "", n, seconds);
    const Measured m = measure(target, sample_requests(pool, n, o.seed + uint64_t(run)),
                               arrival_spec(o, rate, o.seed + uint64_t(run)), 0, o.warmup, o.cooldown, slos);
    const CapacityStep& s = finder.record(m.counted, m.duration_s);
    for (const std::string& line : describe_step(s, fc)) std::fprintf(stderr, "%s\n", line.c_str());
    last = m.summary;
  }
  const CapacityResult r = finder.result();
  if (r.found)
    std::printf("capacity: %.3f req/s within %s (%s)\n", r.sustainable_rate,
                [&] {
                  std::string all;
                  for (const Slo& s : slos) all += (all.empty() ? "" : ", ") + s.describe();
                  return all;
                }().c_str(),
                r.stop_reason.c_str());
  else
    std::printf("capacity: no rate met the SLOs (%s)\n", r.stop_reason.c_str());
  const auto by_estimate = std::count_if(r.steps.begin(), r.steps.end(),
                                         [](const CapacityStep& s) { return s.decided_by == "point estimate"; });
  if (by_estimate > 0)
    std::printf("note: %lld of %zu steps were decided on point estimates: their intervals stayed undecided %s\n",
                (long long)by_estimate, r.steps.size(),
                fc.max_step_requests > 0 ? ("up to " + std::to_string(fc.max_step_requests) + " requests "
                                            "(--step-max-requests)").c_str()
                                         : "(--step-max-requests 0 adds no runs)");
  save_report(o, make_report(settings, last, r));
  return 0;
}

}  // namespace

CLI::App* add_loadtest_command(CLI::App& app, std::function<int()>& action) {
  auto o = std::make_shared<LoadtestOptions>();
  CLI::App* cmd = app.add_subcommand("loadtest", "Drive an OpenAI-compatible server and measure latency and goodput");
  cmd->add_option("--url", o->url, "Server address, http://HOST:PORT")->capture_default_str();
  cmd->add_option("--api-key", o->api_key, "Bearer token to send");
  cmd->add_option("--model", o->model, "Model id to request (default: the first of /v1/models)");
  cmd->add_option("--endpoint", o->endpoint, "chat (/v1/chat/completions) or completions (/v1/completions)")
      ->check(CLI::IsMember({"chat", "completions"}))
      ->capture_default_str();
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Ask for exactly max_tokens tokens (the server must accept ignore_eos)");
  cmd->add_option("--request-timeout", o->request_timeout, "Seconds before a request counts as failed (timeout)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("-n,--num-requests", o->num_requests, "Requests to send (capacity search: the pool sampled from)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--input-len", o->input_len, "Prompt tokens: N, uniform:A:B, normal:MEAN:SD or lognormal:MEAN:SD")
      ->capture_default_str();
  cmd->add_option("--output-len", o->output_len, "max_tokens, in the same forms as --input-len")->capture_default_str();
  cmd->add_option("--shared-prefix", o->shared_prefix, "K:P:FRACTION: K prefixes of P tokens, each request uses one "
                                                       "with probability FRACTION");
  cmd->add_option("--prompts", o->prompts_file, "JSONL prompt file ({\"prompt\": ...} or {\"messages\": [...]} lines)");
  cmd->add_option("--sharegpt", o->sharegpt_file, "ShareGPT-style JSON conversations");
  cmd->add_option("--seed", o->seed, "Seed of the workload and the arrivals")->capture_default_str();
  cmd->add_option("--arrival", o->arrival, "poisson, gamma, constant or closed (fixed concurrency)")
      ->check(CLI::IsMember({"poisson", "gamma", "constant", "closed"}))
      ->capture_default_str();
  cmd->add_option("--rate", o->rate, "Requests per second (open loop)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--burstiness", o->burstiness, "Gamma shape: < 1 burstier than Poisson, 1 Poisson")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--concurrency", o->concurrency, "Requests in flight (closed loop)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--duration", o->duration, "Stop sending after this many seconds (0: when every request is sent)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "Leave out requests sent in the first seconds")->capture_default_str();
  cmd->add_option("--cooldown", o->cooldown, "Leave out requests sent in the last seconds")->capture_default_str();
  cmd->add_option("--slo", o->slos, "An objective METRIC:pNN:LIMIT (ttft, tpot, itl, e2e; p90, p95, p99), e.g. "
                                    "ttft:p99:1s or tpot:p99:100ms; repeatable; goodput counts requests meeting all");
  cmd->add_flag("--find-capacity", o->find_capacity,
                "Search the highest rate meeting every --slo: ramp x1.2 per step, then bisect; each step is "
                "decided by confidence intervals of its percentiles (see --step-requests)");
  cmd->add_option("--start-rate", o->start_rate, "Capacity search: first rate")->check(CLI::PositiveNumber);
  cmd->add_option("--precision", o->precision, "Capacity search: stop when (bad - good) / good is at most this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--min-step", o->min_step_s, "Capacity search: seconds per step at least (steps also run long "
                                               "enough for their percentile)")
      ->capture_default_str();
  cmd->add_option("--step-requests", o->step_requests,
                  "Capacity search: requests per run of a step instead of 10 beyond the highest SLO percentile "
                  "(p99: 1000). The sample count decides what a step can show: a step is met only when the "
                  "confidence interval of each SLO percentile lies within its limit and missed only when one lies "
                  "above it. With few samples the interval is wide or open (p99 at 95%: no upper end below 368 "
                  "samples, an upper end below the maximum from 555), so such a step gets more runs rather than "
                  "being decided by its slowest request; the per-step lines print each interval and warn when "
                  "the samples are too few")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--step-max-requests", o->step_max_requests,
                  "Capacity search: counted requests after which a step the intervals leave undecided is decided "
                  "on its point estimates (said in its line and the final note); 0: never add runs (default: the "
                  "larger of 4 runs and 10 beyond the percentile, e.g. 1000 for p99)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--confidence", o->confidence,
                  "Capacity search: confidence of each SLO percentile's interval (from order statistics: no "
                  "assumption on the latency distribution's shape)")
      ->check(CLI::Range(0.5, 0.9999))
      ->capture_default_str();
  cmd->add_option("--server-warmup", o->server_warmup_s,
                  "Capacity search: first send requests at the start rate for this many seconds, not counted")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--max-rate", o->max_rate, "Capacity search: highest rate to try (0: no limit)");
  cmd->add_option("--output-json", o->output_json, "Write the report (settings, summary, capacity steps) here");
  cmd->add_option("--plot", o->plot, "Draw the report into FILE.svg or FILE.png (needs python3 with matplotlib): "
                                     "latency percentiles, or for --find-capacity each step's p99 TTFT/TPOT and "
                                     "SLO metrics against the offered rate");
  cmd->callback([&action, o] { action = [o] { return run_loadtest(*o); }; });
  return cmd;
}

}  // namespace db::cli

// The highest request rate a server sustains within its SLOs, found step by step.
// A pure state machine: it proposes a rate, the driver runs requests at that rate and
// records the ones its measurement window counts, and the finder decides the next rate
// or stops.
//
// Search: ramp up from start_rate by x ramp_factor per step until a step violates;
// then back off to the last good rate (not re-measured) and bisect between it and the
// first bad rate until (bad - good) / good <= precision. If the start rate already
// violates, halve the rate until a step meets the SLOs (or min_rate is passed), then
// bisect the same way.
//
// A step is judged by each SLO percentile's order-statistic interval at `confidence`
// (slo_judgement.h): it violates when an interval lies wholly above its limit, when
// more than max_error_fraction of its requests failed, or when none succeeded; it meets
// the SLOs when every interval lies wholly within its limit. Otherwise the step is
// undecided and the finder asks for another run at the same rate (extending()), whose
// requests join the step's, until the step has counted max_step_requests; then the
// undecided SLOs are judged on their point estimates and the step says so
// (decided_by "point estimate"). So a few samples never decide a step by one outlier:
// with 50 samples the p99's interval has no upper end, and only more requests can
// show it met. Each interval holds at `confidence` on its own: with several SLOs the
// chances of a wrong call add up (at most 2.5% per SLO at 95%), and ITL samples, gaps
// pooled over requests, are not independent, so their interval is narrower than it
// should be.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "loadtest/latency_stats.h"
#include "loadtest/slo.h"
#include "loadtest/slo_judgement.h"

namespace db::loadtest {

struct CapacityFinderConfig {
  std::vector<Slo> slos;  // at least one
  double start_rate = 1;  // requests/s
  double ramp_factor = 1.2;
  double precision = 0.05;
  double max_error_fraction = 0.01;
  double min_rate = 0.01;  // the downward search gives up below this
  double max_rate = std::numeric_limits<double>::infinity();  // the ramp stops here without a violation
  int32_t max_steps = 40;
  double confidence = 0.95;       // of each SLO percentile's interval
  int64_t max_step_requests = 0;  // counted requests after which an undecided step is decided
                                  // on point estimates; 0: at once (no runs are added)
};

struct SloCheck {
  Slo slo;
  double observed = 0;  // the step's percentile of the SLO's metric (the point estimate)
  bool met = false;     // the decision: by the interval, or by the estimate when that was left undecided
  SloJudgement judgement;
};

struct CapacityStep {
  int32_t index = 0;          // from 0
  std::string phase;          // "ramp", "ramp_down" or "bisect"
  double rate = 0;            // offered requests/s
  Verdict verdict = Verdict::Undecided;  // Undecided only while more runs are to come
  bool met = false;           // verdict == Met
  // "interval", "point estimate" (max_step_requests reached, or a run added nothing),
  // "errors" (failures or no success); empty while undecided.
  std::string decided_by;
  int32_t runs = 1;           // runs at this rate whose requests the step pools
  std::vector<SloCheck> checks;
  int64_t requests = 0, failed = 0;
  double achieved_rate = 0;   // the step's measured successful requests/s
  double goodput = 0;
  Distribution ttft, tpot, itl, e2e;  // the step's latencies, whichever metrics the SLOs name
};

struct CapacityResult {
  bool found = false;               // some step met every SLO
  double sustainable_rate = 0;      // the highest rate that met them (0 when none did)
  std::optional<double> first_bad_rate;  // the lowest rate that violated them, if any
  bool converged = false;           // (bad - good) / good <= precision
  std::string stop_reason;
  std::vector<CapacityStep> steps;  // decided steps, in order
};

class CapacityFinder {
 public:
  // Throws db::Error on an invalid config (no SLOs, rates not > 0, ramp_factor <= 1,
  // precision <= 0, confidence outside (0, 1), max_step_requests < 0).
  explicit CapacityFinder(CapacityFinderConfig config);

  bool done() const { return done_; }
  // The rate the next run should use. Requires !done().
  double proposed_rate() const;
  // Whether the next run adds requests to the step recorded last (it was undecided)
  // rather than starting a new step.
  bool extending() const { return open_.has_value(); }
  // Records a run at proposed_rate(): the requests its measurement window counted, over
  // `duration_s` seconds. Returns the step as judged with every run so far pooled:
  // undecided while extending(), else decided. Requires !done().
  const CapacityStep& record(const std::vector<RequestResult>& counted, double duration_s);
  CapacityResult result() const;

  const CapacityFinderConfig& config() const { return config_; }

 private:
  struct OpenStep {
    std::vector<RequestResult> results;
    double duration_s = 0;
    int32_t runs = 0;
  };

  void decide_next();
  void stop(std::string reason);

  CapacityFinderConfig config_;
  double rate_;
  std::string phase_ = "ramp";
  std::optional<double> good_, bad_;
  std::optional<OpenStep> open_;  // the undecided step's runs
  CapacityStep last_;             // what record() returned
  std::vector<CapacityStep> steps_;
  bool done_ = false;
  std::string stop_reason_;
};

// The step `counted` over `duration_s` makes under `config`: each SLO judged by its
// interval; with `final_run` the SLOs the intervals leave undecided are judged on their
// point estimates (decided_by "point estimate"). index, phase, rate and runs are the caller's.
CapacityStep evaluate_step(const std::vector<RequestResult>& counted, double duration_s,
                           const CapacityFinderConfig& config, bool final_run);

}  // namespace db::loadtest

// The highest request rate a server sustains within its SLOs, found step by step.
// A pure state machine: it proposes a rate, the driver runs a step at that rate and
// reports the step's RunSummary, and the finder decides the next rate or stops.
//
// Search: ramp up from start_rate by x ramp_factor per step until a step violates;
// then back off to the last good rate (not re-measured) and bisect between it and the
// first bad rate until (bad - good) / good <= precision. If the start rate already
// violates, halve the rate until a step meets the SLOs (or min_rate is passed), then
// bisect the same way. A step violates when an SLO's run percentile exceeds its limit,
// when more than max_error_fraction of its requests failed, or when none succeeded.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "loadtest/latency_stats.h"
#include "loadtest/slo.h"

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
};

struct SloCheck {
  Slo slo;
  double observed = 0;  // the step's percentile of the SLO's metric
  bool met = false;
};

struct CapacityStep {
  int32_t index = 0;          // from 0
  std::string phase;          // "ramp", "ramp_down" or "bisect"
  double rate = 0;            // offered requests/s
  bool met = false;
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
  std::vector<CapacityStep> steps;
};

class CapacityFinder {
 public:
  // Throws db::Error on an invalid config (no SLOs, rates not > 0, ramp_factor <= 1, precision <= 0).
  explicit CapacityFinder(CapacityFinderConfig config);

  bool done() const { return done_; }
  // The rate the next step should run at. Requires !done().
  double proposed_rate() const;
  // Records the step run at proposed_rate() and decides the next one. Requires !done().
  const CapacityStep& record(const RunSummary& measured);
  CapacityResult result() const;

  const CapacityFinderConfig& config() const { return config_; }

 private:
  void decide_next();
  void stop(std::string reason);

  CapacityFinderConfig config_;
  double rate_;
  std::string phase_ = "ramp";
  std::optional<double> good_, bad_;
  std::vector<CapacityStep> steps_;
  bool done_ = false;
  std::string stop_reason_;
};

// The checks of `measured` against `config` (the SLOs, error fraction, any success).
CapacityStep evaluate_step(const RunSummary& measured, const CapacityFinderConfig& config);

}  // namespace db::loadtest

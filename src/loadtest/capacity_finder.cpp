#include "loadtest/capacity_finder.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "util/error.h"

namespace db::loadtest {

CapacityStep evaluate_step(const RunSummary& measured, const CapacityFinderConfig& config) {
  CapacityStep step;
  step.requests = measured.requests;
  step.failed = measured.failed;
  step.achieved_rate = measured.request_rate;
  step.goodput = measured.goodput;
  step.ttft = measured.ttft;
  step.tpot = measured.tpot;
  step.itl = measured.itl;
  step.e2e = measured.e2e;
  step.met = measured.succeeded > 0;
  if (measured.requests > 0 &&
      static_cast<double>(measured.failed) / static_cast<double>(measured.requests) > config.max_error_fraction)
    step.met = false;
  for (const Slo& slo : config.slos) {
    SloCheck c{slo, measured.observed(slo), false};
    c.met = measured.metric(slo.metric).count > 0 && c.observed <= slo.limit_s;
    step.met = step.met && c.met;
    step.checks.push_back(c);
  }
  return step;
}

CapacityFinder::CapacityFinder(CapacityFinderConfig config) : config_(std::move(config)), rate_(config_.start_rate) {
  if (config_.slos.empty()) throw Error("the capacity finder needs at least one SLO");
  validate(config_.slos);
  if (!(config_.start_rate > 0) || !(config_.min_rate > 0) || !(config_.max_rate >= config_.start_rate))
    throw Error("capacity finder rates: need start_rate > 0, min_rate > 0 and max_rate >= start_rate");
  if (!(config_.ramp_factor > 1)) throw Error("capacity finder ramp factor must be > 1");
  if (!(config_.precision > 0)) throw Error("capacity finder precision must be > 0");
  if (config_.max_steps < 1) throw Error("capacity finder needs at least one step");
}

double CapacityFinder::proposed_rate() const {
  DB_CHECK(!done_, "the capacity finder has finished");
  return rate_;
}

const CapacityStep& CapacityFinder::record(const RunSummary& measured) {
  DB_CHECK(!done_, "the capacity finder has finished");
  CapacityStep step = evaluate_step(measured, config_);
  step.index = static_cast<int32_t>(steps_.size());
  step.phase = phase_;
  step.rate = rate_;
  // The schedule keeps every proposed rate strictly between good_ and bad_, so an
  // outcome only ever narrows the bracket.
  if (step.met) good_ = rate_;
  else bad_ = rate_;
  steps_.push_back(std::move(step));
  decide_next();
  return steps_.back();
}

void CapacityFinder::decide_next() {
  if (good_ && bad_ && (*bad_ - *good_) / *good_ <= config_.precision) return stop("converged");
  if (static_cast<int32_t>(steps_.size()) >= config_.max_steps) return stop("step limit reached");
  if (good_ && bad_) {
    phase_ = "bisect";
    rate_ = (*good_ + *bad_) / 2;
  } else if (good_) {
    if (rate_ >= config_.max_rate) return stop("max rate met the SLOs");
    phase_ = "ramp";
    rate_ = std::min(rate_ * config_.ramp_factor, config_.max_rate);
  } else {
    if (rate_ / 2 < config_.min_rate) return stop("no rate down to the minimum met the SLOs");
    phase_ = "ramp_down";
    rate_ /= 2;
  }
}

void CapacityFinder::stop(std::string reason) {
  done_ = true;
  stop_reason_ = std::move(reason);
}

CapacityResult CapacityFinder::result() const {
  CapacityResult r;
  r.found = good_.has_value();
  r.sustainable_rate = good_.value_or(0);
  r.first_bad_rate = bad_;
  r.converged = good_ && bad_ && (*bad_ - *good_) / *good_ <= config_.precision;
  r.stop_reason = done_ ? stop_reason_ : "running";
  r.steps = steps_;
  return r;
}

}  // namespace db::loadtest

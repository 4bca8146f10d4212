#include "loadtest/capacity_finder.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "util/error.h"

namespace db::loadtest {

CapacityStep evaluate_step(const std::vector<RequestResult>& counted, double duration_s,
                           const CapacityFinderConfig& config, bool final_run) {
  const RunSummary measured = summarize_run(counted, duration_s, config.slos);
  CapacityStep step;
  step.requests = measured.requests;
  step.failed = measured.failed;
  step.achieved_rate = measured.request_rate;
  step.goodput = measured.goodput;
  step.ttft = measured.ttft;
  step.tpot = measured.tpot;
  step.itl = measured.itl;
  step.e2e = measured.e2e;
  const bool errors = measured.succeeded == 0 ||
                      (measured.requests > 0 && static_cast<double>(measured.failed) /
                                                        static_cast<double>(measured.requests) >
                                                    config.max_error_fraction);
  bool any_missed = false, all_met = true;
  for (const Slo& slo : config.slos) {
    SloCheck c{slo, measured.observed(slo), false,
               judge_slo(metric_samples(counted, slo.metric), slo, config.confidence)};
    c.met = c.judgement.verdict == Verdict::Met;
    any_missed = any_missed || c.judgement.verdict == Verdict::Missed;
    all_met = all_met && c.met;
    step.checks.push_back(std::move(c));
  }
  if (errors) {
    step.verdict = Verdict::Missed;
    step.decided_by = "errors";
  } else if (any_missed || all_met) {
    step.verdict = any_missed ? Verdict::Missed : Verdict::Met;
    step.decided_by = "interval";
  } else if (final_run) {
    // The intervals could not decide and no more requests come: the point estimates
    // decide the SLOs left open, as a finder without intervals would.
    bool met = true;
    for (SloCheck& c : step.checks) {
      if (c.judgement.verdict == Verdict::Undecided) c.met = c.judgement.samples > 0 && c.observed <= c.slo.limit_s;
      met = met && c.met;
    }
    step.verdict = met ? Verdict::Met : Verdict::Missed;
    step.decided_by = "point estimate";
  }
  step.met = step.verdict == Verdict::Met;
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
  if (!(config_.confidence > 0 && config_.confidence < 1)) throw Error("capacity finder confidence must be in (0, 1)");
  if (config_.max_step_requests < 0) throw Error("capacity finder max_step_requests must be >= 0");
}

double CapacityFinder::proposed_rate() const {
  DB_CHECK(!done_, "the capacity finder has finished");
  return rate_;
}

const CapacityStep& CapacityFinder::record(const std::vector<RequestResult>& counted, double duration_s) {
  DB_CHECK(!done_, "the capacity finder has finished");
  const bool extension = open_.has_value();
  OpenStep& open = extension ? *open_ : open_.emplace();
  open.results.insert(open.results.end(), counted.begin(), counted.end());
  open.duration_s += duration_s;
  ++open.runs;
  // A run that counted nothing would be asked for again and again: it ends the step.
  const bool final_run = (extension && counted.empty()) ||
                         static_cast<int64_t>(open.results.size()) >= config_.max_step_requests;
  CapacityStep step = evaluate_step(open.results, open.duration_s, config_, final_run);
  step.index = static_cast<int32_t>(steps_.size());
  step.phase = phase_;
  step.rate = rate_;
  step.runs = open.runs;
  if (step.verdict == Verdict::Undecided) {
    last_ = std::move(step);
    return last_;
  }
  open_.reset();
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

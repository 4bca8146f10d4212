#include "loadtest/step_log.h"

#include <cstdarg>
#include <cstdio>

namespace db::loadtest {

namespace {

std::string step_log_format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

std::string step_log_format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

// "x(48) = 412.0 ms", or "open" for an end the samples leave open.
std::string step_log_end(int64_t rank, const std::optional<double>& value) {
  return value ? step_log_format("x(%lld) = %.1f ms", (long long)rank, *value * 1e3) : "open";
}

std::string step_log_outcome(const CapacityStep& s, const CapacityFinderConfig& config) {
  if (s.verdict == Verdict::Undecided) return "undecided, adding requests";
  if (s.decided_by == "errors")
    return step_log_format("SLOs violated: %lld of %lld requests failed", (long long)s.failed, (long long)s.requests);
  const char* outcome = s.met ? "SLOs met" : "SLOs violated";
  if (s.decided_by == "interval") return step_log_format("%s by the intervals", outcome);
  if (config.max_step_requests == 0)
    return step_log_format("%s on the point estimates: the intervals were undecided (no runs added)", outcome);
  return step_log_format("%s on the point estimates: the intervals stayed undecided (cap %lld requests)", outcome,
                         (long long)config.max_step_requests);
}

}  // namespace

std::vector<std::string> describe_step(const CapacityStep& s, const CapacityFinderConfig& config) {
  std::vector<std::string> lines;
  lines.push_back(step_log_format("step %d (%s, %.3f req/s): %lld requests in %d run%s, %.2f req/s achieved: %s",
                                  s.index, s.phase.c_str(), s.rate, (long long)s.requests, s.runs,
                                  s.runs == 1 ? "" : "s", s.achieved_rate, step_log_outcome(s, config).c_str()));
  for (const SloCheck& c : s.checks) {
    const SloJudgement& j = c.judgement;
    std::string verdict(verdict_name(j.verdict));
    if (j.verdict == Verdict::Undecided && s.decided_by == "point estimate")
      verdict += c.met ? ", met on the estimate" : ", missed on the estimate";
    lines.push_back(step_log_format(
        "  %s: p%g = %.1f ms over %lld samples (%lld above it, %lld above the limit), %g%% CI [%s, %s]: %s",
        c.slo.describe().c_str(), c.slo.percentile, c.observed * 1e3, (long long)j.samples,
        (long long)j.above_estimate, (long long)j.above_limit, j.confidence * 100,
        step_log_end(j.ranks.lower_rank, j.lower).c_str(), step_log_end(j.ranks.upper_rank, j.upper).c_str(),
        verdict.c_str()));
    if (j.too_few_samples)
      lines.push_back(step_log_format(
          "  warning: %lld samples are too few for %s p%g: the interval's upper end is not a sample below the "
          "maximum (%lld samples make it one)",
          (long long)j.samples, std::string(metric_name(c.slo.metric)).c_str(), c.slo.percentile,
          (long long)j.samples_wanted));
  }
  return lines;
}

}  // namespace db::loadtest

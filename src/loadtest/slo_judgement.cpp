#include "loadtest/slo_judgement.h"

#include <algorithm>

#include "util/percentile.h"

namespace db::loadtest {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Met: return "met";
    case Verdict::Missed: return "missed";
    case Verdict::Undecided: return "undecided";
  }
  return "?";
}

Verdict interval_verdict(std::optional<double> lower, std::optional<double> upper, double limit) {
  if (upper && *upper <= limit) return Verdict::Met;
  if (lower && *lower > limit) return Verdict::Missed;
  return Verdict::Undecided;
}

SloJudgement judge_slo(std::vector<double> samples, const Slo& slo, double confidence) {
  SloJudgement j;
  j.samples = static_cast<int64_t>(samples.size());
  j.confidence = confidence;
  j.ranks = percentile_interval(j.samples, slo.percentile, confidence);
  j.samples_wanted = samples_for_upper_below_maximum(slo.percentile, confidence);
  j.too_few_samples = !j.ranks.upper_below_maximum();
  if (samples.empty()) {
    j.verdict = Verdict::Missed;
    return j;
  }
  std::sort(samples.begin(), samples.end());
  j.estimate = percentile(samples, slo.percentile);
  const auto count_above = [&](double v) {
    return static_cast<int64_t>(samples.end() - std::upper_bound(samples.begin(), samples.end(), v));
  };
  j.above_estimate = count_above(j.estimate);
  j.above_limit = count_above(slo.limit_s);
  if (j.ranks.has_lower()) j.lower = samples[static_cast<size_t>(j.ranks.lower_rank - 1)];
  if (j.ranks.has_upper()) j.upper = samples[static_cast<size_t>(j.ranks.upper_rank - 1)];
  j.verdict = interval_verdict(j.lower, j.upper, slo.limit_s);
  return j;
}

}  // namespace db::loadtest

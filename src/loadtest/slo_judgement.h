// Whether samples show a percentile SLO met or missed, with the confidence the
// percentile's order-statistic interval (order_statistics.h) gives, or neither yet.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "loadtest/order_statistics.h"
#include "loadtest/slo.h"

namespace db::loadtest {

enum class Verdict { Met, Missed, Undecided };

std::string_view verdict_name(Verdict v);  // "met", "missed", "undecided"

// The decision rule on an interval [lower, upper] of the percentile (an empty optional:
// that end is open): Met when the whole interval is within the limit (upper <= limit),
// Missed when the whole interval is above it (lower > limit), else Undecided.
Verdict interval_verdict(std::optional<double> lower, std::optional<double> upper, double limit);

struct SloJudgement {
  int64_t samples = 0;
  double estimate = 0;         // the percentile (util/percentile.h's method); 0 without samples
  int64_t above_estimate = 0;  // samples above the estimate: the tail it rests on
  int64_t above_limit = 0;     // samples above the SLO's limit
  double confidence = 0;
  OrderStatisticInterval ranks;
  std::optional<double> lower, upper;  // x(lower_rank), x(upper_rank); empty when that end is open
  // interval_verdict of the interval; Missed without samples (nothing shows the SLO met).
  Verdict verdict = Verdict::Undecided;
  // The interval's upper end is not a sample below the maximum (the percentile is
  // judged from too few samples): samples_wanted would make it one.
  bool too_few_samples = false;
  int64_t samples_wanted = 0;
};

// `slo` judged on `samples` (any order) at `confidence` in (0, 1).
SloJudgement judge_slo(std::vector<double> samples, const Slo& slo, double confidence);

}  // namespace db::loadtest

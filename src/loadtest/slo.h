// Service-level objectives: a latency metric's percentile must stay within a limit.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace db::loadtest {

enum class Metric { TTFT, TPOT, ITL, E2E };

std::string_view metric_name(Metric m);  // "ttft", "tpot", "itl", "e2e"
// The metric named `name` (as metric_name gives it); throws db::Error on another name.
Metric parse_metric(std::string_view name);

struct Slo {
  Metric metric = Metric::TTFT;
  double percentile = 99;  // one of 90, 95, 99
  double limit_s = 1;      // seconds

  std::string describe() const;  // "ttft p99 <= 0.5 s"
};

// Throws db::Error when a percentile is not 90, 95 or 99 or a limit is not > 0.
void validate(const std::vector<Slo>& slos);

// The --slo text "METRIC:pNN:LIMIT": METRIC as parse_metric takes it, NN one of 90, 95,
// 99, LIMIT a number > 0 of seconds with an optional "s" or "ms" suffix, e.g.
// "ttft:p99:1s", "tpot:p99:100ms", "e2e:p90:2.5". Throws db::Error naming --slo and the
// text on any other form.
Slo parse_slo(std::string_view text);

}  // namespace db::loadtest

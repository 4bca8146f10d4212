#include "loadtest/slo.h"

#include <cmath>
#include <cstdio>

#include "util/error.h"

namespace db::loadtest {

std::string_view metric_name(Metric m) {
  switch (m) {
    case Metric::TTFT: return "ttft";
    case Metric::TPOT: return "tpot";
    case Metric::ITL: return "itl";
    case Metric::E2E: return "e2e";
  }
  return "?";
}

Metric parse_metric(std::string_view name) {
  for (Metric m : {Metric::TTFT, Metric::TPOT, Metric::ITL, Metric::E2E})
    if (metric_name(m) == name) return m;
  throw Error("unknown latency metric '" + std::string(name) + "' (expected ttft, tpot, itl or e2e)");
}

std::string Slo::describe() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s p%g <= %g s", std::string(metric_name(metric)).c_str(), percentile, limit_s);
  return buf;
}

void validate(const std::vector<Slo>& slos) {
  for (const Slo& s : slos) {
    if (s.percentile != 90 && s.percentile != 95 && s.percentile != 99)
      throw Error("SLO " + s.describe() + ": the percentile must be 90, 95 or 99");
    if (!(s.limit_s > 0) || !std::isfinite(s.limit_s)) throw Error("SLO " + s.describe() + ": the limit must be > 0");
  }
}

}  // namespace db::loadtest

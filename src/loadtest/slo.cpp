#include "loadtest/slo.h"

#include <charconv>
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

namespace {

// The whole of `text` as a finite number; nullopt on anything else (signs and
// whitespace included: std::from_chars takes neither "+" nor leading blanks).
std::optional<double> whole_number(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

Slo parse_slo(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return Error("--slo: " + why + " in '" + std::string(text) + "' (expected METRIC:pNN:LIMIT like ttft:p99:1s)");
  };
  const size_t a = text.find(':');
  const size_t b = a == std::string_view::npos ? a : text.find(':', a + 1);
  if (b == std::string_view::npos || text.find(':', b + 1) != std::string_view::npos)
    throw bad("not three ':'-separated fields");
  Slo s;
  try {
    s.metric = parse_metric(text.substr(0, a));
  } catch (const Error& e) {
    throw bad(e.what());
  }
  const std::string_view percentile = text.substr(a + 1, b - a - 1);
  const std::optional<double> p = percentile.starts_with('p') ? whole_number(percentile.substr(1)) : std::nullopt;
  if (!p || (*p != 90 && *p != 95 && *p != 99)) throw bad("the percentile must be p90, p95 or p99");
  s.percentile = *p;
  std::string_view limit = text.substr(b + 1);
  double scale = 1;
  if (limit.ends_with("ms")) {
    scale = 1e-3;
    limit.remove_suffix(2);
  } else if (limit.ends_with('s')) {
    limit.remove_suffix(1);
  }
  const std::optional<double> l = whole_number(limit);
  if (!l || !(*l > 0)) throw bad("the limit must be a number > 0 of s or ms");
  s.limit_s = *l * scale;
  return s;
}

}  // namespace db::loadtest

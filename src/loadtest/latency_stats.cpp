#include "loadtest/latency_stats.h"

#include <algorithm>

#include "util/error.h"

namespace db::loadtest {

std::optional<double> RequestResult::tpot() const {
  if (output_tokens < 2) return std::nullopt;
  return (e2e - ttft) / static_cast<double>(output_tokens - 1);
}

bool meets(const RequestResult& r, const Slo& slo) {
  if (!r.ok) return false;
  switch (slo.metric) {
    case Metric::TTFT: return r.ttft <= slo.limit_s;
    case Metric::E2E: return r.e2e <= slo.limit_s;
    case Metric::TPOT: {
      const std::optional<double> t = r.tpot();
      return !t || *t <= slo.limit_s;
    }
    case Metric::ITL: {
      if (r.itl.empty()) return true;
      std::vector<double> sorted = r.itl;
      std::sort(sorted.begin(), sorted.end());
      return percentile(sorted, slo.percentile) <= slo.limit_s;
    }
  }
  return false;
}

const Distribution& RunSummary::metric(Metric m) const {
  switch (m) {
    case Metric::TTFT: return ttft;
    case Metric::TPOT: return tpot;
    case Metric::ITL: return itl;
    case Metric::E2E: return e2e;
  }
  DB_CHECK(false, "unknown metric");
}

double RunSummary::observed(const Slo& slo) const { return metric(slo.metric).at_percentile(slo.percentile); }

std::vector<double> metric_samples(const std::vector<RequestResult>& results, Metric m) {
  std::vector<double> out;
  for (const RequestResult& r : results) {
    if (!r.ok) continue;
    switch (m) {
      case Metric::TTFT: out.push_back(r.ttft); break;
      case Metric::E2E: out.push_back(r.e2e); break;
      case Metric::TPOT:
        if (const std::optional<double> t = r.tpot()) out.push_back(*t);
        break;
      case Metric::ITL: out.insert(out.end(), r.itl.begin(), r.itl.end()); break;
    }
  }
  return out;
}

RunSummary summarize_run(const std::vector<RequestResult>& results, double duration_s, const std::vector<Slo>& slos) {
  RunSummary s;
  s.duration_s = duration_s;
  std::vector<double> ttft, tpot, itl, e2e;
  int64_t input_tokens = 0, output_tokens = 0;
  for (const RequestResult& r : results) {
    ++s.requests;
    if (!r.ok) {
      ++s.failed;
      ++s.errors[r.error_type.empty() ? "unknown" : r.error_type];
      continue;
    }
    ++s.succeeded;
    input_tokens += r.input_tokens;
    output_tokens += r.output_tokens;
    ttft.push_back(r.ttft);
    e2e.push_back(r.e2e);
    if (const std::optional<double> t = r.tpot()) tpot.push_back(*t);
    itl.insert(itl.end(), r.itl.begin(), r.itl.end());
    if (std::all_of(slos.begin(), slos.end(), [&](const Slo& slo) { return meets(r, slo); })) ++s.good;
  }
  s.ttft = summarize_samples(std::move(ttft));
  s.tpot = summarize_samples(std::move(tpot));
  s.itl = summarize_samples(std::move(itl));
  s.e2e = summarize_samples(std::move(e2e));
  s.itl_jitter = {s.itl.stddev, s.itl.p99 - s.itl.p50};
  if (duration_s > 0) {
    s.request_rate = static_cast<double>(s.succeeded) / duration_s;
    s.input_tokens_per_s = static_cast<double>(input_tokens) / duration_s;
    s.output_tokens_per_s = static_cast<double>(output_tokens) / duration_s;
    s.goodput = static_cast<double>(s.good) / duration_s;
  }
  return s;
}

}  // namespace db::loadtest

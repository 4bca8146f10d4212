// Per-request measurements of a load test and the run's summary.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loadtest/distribution.h"
#include "loadtest/slo.h"

namespace db::loadtest {

// What the driver records for one request. Times are seconds.
struct RequestResult {
  double start_time = 0;      // send time on the driver's clock (for MeasurementWindow)
  bool ok = false;
  std::string error_type;     // set when !ok, e.g. "http_503", "timeout", "connection"
  double ttft = 0;            // send -> first output token
  double e2e = 0;             // send -> last output token
  std::vector<double> itl;    // gaps between consecutive streamed output tokens (chunks)
  int32_t input_tokens = 0;   // prompt tokens (the server's usage count when it gives one)
  int32_t output_tokens = 0;

  // Time per output token after the first: (e2e - ttft) / (output_tokens - 1);
  // none with fewer than 2 output tokens.
  std::optional<double> tpot() const;
};

// Whether a successful request meets `slo` by its own measurements: TTFT, TPOT and E2E
// compare the request's value with the limit (a request without a TPOT meets TPOT SLOs);
// ITL compares the request's own `slo.percentile`-th ITL (none: met). The percentile of
// TTFT/TPOT/E2E SLOs applies to the run, not to single requests. Failed requests meet nothing.
bool meets(const RequestResult& r, const Slo& slo);

struct ItlJitter {
  double stddev = 0;          // of all ITL samples of the run pooled
  double p99_minus_p50 = 0;
};

struct RunSummary {
  int64_t requests = 0;       // counted requests (after the measurement window)
  int64_t succeeded = 0;
  int64_t failed = 0;
  int64_t good = 0;           // succeeded and met every SLO
  double duration_s = 0;      // the rates' denominator
  double request_rate = 0;    // succeeded / duration_s
  double input_tokens_per_s = 0;   // over succeeded requests
  double output_tokens_per_s = 0;  // over succeeded requests
  double goodput = 0;         // good / duration_s
  Distribution ttft, tpot, itl, e2e;  // over succeeded requests; itl pools every request's gaps
  ItlJitter itl_jitter;
  std::map<std::string, int64_t> errors;  // failed requests by error_type

  const Distribution& metric(Metric m) const;
  // The run's value for `slo` (its metric at its percentile) and whether it is within the limit.
  double observed(const Slo& slo) const;
  bool met(const Slo& slo) const { return observed(slo) <= slo.limit_s; }
};

// The samples of metric `m` among the successful `results`, in request order: one TTFT,
// TPOT (requests with one), or E2E per request; every ITL gap of every request pooled.
std::vector<double> metric_samples(const std::vector<RequestResult>& results, Metric m);

// The summary of the counted `results` (already filtered by the measurement window)
// over `duration_s` seconds (> 0, else every rate is 0), with goodput against `slos`.
RunSummary summarize_run(const std::vector<RequestResult>& results, double duration_s, const std::vector<Slo>& slos);

}  // namespace db::loadtest

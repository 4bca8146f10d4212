// The JSON report of a load test: the settings, the run's summary and, for a
// capacity search, every step. Keys keep their insertion order (ordered_json).
//
// {"settings": {...caller's...},
//  "summary": {"requests", "succeeded", "failed", "good", "duration_s", "request_rate",
//              "input_tokens_per_s", "output_tokens_per_s", "goodput",
//              "ttft"|"tpot"|"itl"|"e2e": {"count", "mean", "stddev", "min", "max",
//                                          "p50", "p90", "p95", "p99", "p99.9"} (seconds),
//              "itl_jitter": {"stddev", "p99_minus_p50"}, "errors": {type: count}},
//  "capacity": {"found", "sustainable_rate", "first_bad_rate" (null when none), "converged",
//               "stop_reason", "steps": [{"index", "phase", "rate", "met", "decided_by"
//               ("interval", "point estimate" or "errors"), "runs", "requests", "failed",
//               "achieved_rate", "goodput", "slos": [{"slo", "metric", "percentile",
//               "limit_s", "observed", "met", "verdict" (the interval's: "met", "missed" or
//               "undecided"), "samples", "above_percentile", "above_limit", "interval":
//               {"confidence", "lower_rank", "upper_rank", "lower", "upper"} (null: open),
//               "too_few_samples"}], "latency": {"ttft"|"tpot"|"itl"|"e2e": {...as in
//               "summary"}}}]}}   (only for a capacity search)
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "loadtest/arrivals.h"
#include "loadtest/capacity_finder.h"
#include "loadtest/latency_stats.h"
#include "loadtest/measurement_window.h"
#include "loadtest/slo.h"
#include "loadtest/workload.h"

namespace db::loadtest {

using OrderedJson = nlohmann::ordered_json;

// Pieces for the caller's "settings" object.
OrderedJson to_json(const SyntheticWorkloadSpec& spec);
OrderedJson to_json(const ArrivalSpec& spec);
OrderedJson to_json(const MeasurementWindow& window);
OrderedJson to_json(const std::vector<Slo>& slos);

OrderedJson to_json(const Distribution& d);
OrderedJson to_json(const RunSummary& s);
OrderedJson to_json(const CapacityResult& r);

// The whole report; "capacity" only when `capacity` is given.
OrderedJson make_report(const OrderedJson& settings, const RunSummary& summary,
                        const std::optional<CapacityResult>& capacity = std::nullopt);

// The summary a report's "summary" object holds (as to_json wrote it); throws db::Error
// naming the missing or mistyped key. For comparing saved reports.
RunSummary summary_from_json(const nlohmann::ordered_json& j);

// Writes `report` to `path` (pretty-printed, 2-space indent); throws db::Error on failure.
void write_report(const std::string& path, const OrderedJson& report);

}  // namespace db::loadtest

// The JSON report: its layout and a round trip of the summary's key fields.
#include <gtest/gtest.h>

#include <vector>

#include "loadtest/order_statistics.h"
#include "loadtest/report.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

RunSummary sample_summary() {
  RequestResult a, b, c;
  a.ok = b.ok = true;
  a.ttft = 0.1, a.e2e = 1.0, a.input_tokens = 10, a.output_tokens = 10, a.itl = {0.1, 0.1, 0.2};
  b.ttft = 0.3, b.e2e = 2.0, b.input_tokens = 20, b.output_tokens = 5, b.itl = {0.4, 0.5};
  c.error_type = "http_500";
  return summarize_run({a, b, c}, 4.0, {{Metric::TTFT, 99, 0.2}});
}

TEST(Report, SummaryRoundTripsThroughText) {
  const RunSummary s = sample_summary();
  OrderedJson settings;
  SyntheticWorkloadSpec workload;
  workload.input_len = parse_length_dist("uniform:10:20", "input");
  settings["workload"] = to_json(workload);
  settings["arrivals"] = to_json(ArrivalSpec{ArrivalSpec::Kind::Gamma, 4, 0.5, 1, 7});
  settings["window"] = to_json(MeasurementWindow{0, 70, 5, 5});
  settings["slos"] = to_json(std::vector<Slo>{{Metric::TTFT, 99, 0.2}});
  const OrderedJson report = make_report(settings, s);

  const auto parsed = nlohmann::ordered_json::parse(report.dump(2));
  EXPECT_EQ(parsed.begin().key(), "settings");
  EXPECT_FALSE(parsed.contains("capacity"));
  EXPECT_EQ(parsed["settings"]["workload"]["input_len"], "uniform:10:20");
  EXPECT_EQ(parsed["settings"]["arrivals"]["process"], "gamma rate=4 burstiness=0.5");
  EXPECT_EQ(parsed["settings"]["window"]["measured_s"], 60.0);
  EXPECT_EQ(parsed["settings"]["slos"][0]["metric"], "ttft");

  const RunSummary back = summary_from_json(parsed["summary"]);
  EXPECT_EQ(back.requests, 3);
  EXPECT_EQ(back.succeeded, 2);
  EXPECT_EQ(back.failed, 1);
  EXPECT_EQ(back.good, 1);
  EXPECT_DOUBLE_EQ(back.request_rate, s.request_rate);
  EXPECT_DOUBLE_EQ(back.output_tokens_per_s, 15.0 / 4);
  EXPECT_DOUBLE_EQ(back.goodput, 0.25);
  EXPECT_DOUBLE_EQ(back.ttft.p99, s.ttft.p99);
  EXPECT_DOUBLE_EQ(back.tpot.mean, s.tpot.mean);
  EXPECT_DOUBLE_EQ(back.itl.p999, s.itl.p999);
  EXPECT_DOUBLE_EQ(back.e2e.max, 2.0);
  EXPECT_DOUBLE_EQ(back.itl_jitter.p99_minus_p50, s.itl_jitter.p99_minus_p50);
  EXPECT_EQ(back.errors, s.errors);
}

// Ten requests with the given TTFT, 2 s E2E and 5 output tokens.
std::vector<RequestResult> report_test_run(double ttft) {
  std::vector<RequestResult> run(10);
  for (RequestResult& r : run) {
    r.ok = true;
    r.ttft = ttft;
    r.e2e = 2.0;
    r.output_tokens = 5;
  }
  return run;
}

TEST(Report, CapacityStepsAreListed) {
  CapacityFinderConfig config;
  config.slos = {{Metric::TTFT, 99, 0.2}};
  config.max_step_requests = 0;  // an undecided step is decided at once on its estimate
  CapacityFinder finder(config);
  finder.record(report_test_run(0.1), 10.0);  // p99 interval open above: undecided, estimate met
  finder.record(report_test_run(0.5), 10.0);  // its lower end above the limit: missed
  const RunSummary good = summarize_run(report_test_run(0.1), 10.0, config.slos);
  const OrderedJson report = make_report(OrderedJson::object(), good, finder.result());
  const auto parsed = nlohmann::ordered_json::parse(report.dump());
  const auto& cap = parsed["capacity"];
  EXPECT_EQ(cap["found"], true);
  EXPECT_EQ(cap["sustainable_rate"], 1.0);
  EXPECT_EQ(cap["first_bad_rate"], 1.2);
  EXPECT_EQ(cap["stop_reason"], "running");
  ASSERT_EQ(cap["steps"].size(), 2u);
  const auto& first = cap["steps"][0];
  const auto& second = cap["steps"][1];
  EXPECT_EQ(second["phase"], "ramp");
  EXPECT_EQ(second["met"], false);
  EXPECT_EQ(second["slos"][0]["observed"], 0.5);
  EXPECT_EQ(second["slos"][0]["slo"], "ttft p99 <= 0.2 s");
  // How each step was decided, with the interval and the tail counts behind it.
  EXPECT_EQ(first["met"], true);
  EXPECT_EQ(first["decided_by"], "point estimate");
  EXPECT_EQ(first["runs"], 1);
  EXPECT_EQ(first["slos"][0]["verdict"], "undecided");
  EXPECT_EQ(first["slos"][0]["samples"], 10);
  EXPECT_EQ(first["slos"][0]["above_percentile"], 0);
  EXPECT_EQ(first["slos"][0]["above_limit"], 0);
  EXPECT_EQ(first["slos"][0]["too_few_samples"], true);
  EXPECT_EQ(first["slos"][0]["interval"]["confidence"], 0.95);
  EXPECT_TRUE(first["slos"][0]["interval"]["upper_rank"].is_null());
  EXPECT_TRUE(first["slos"][0]["interval"]["upper"].is_null());
  EXPECT_EQ(first["slos"][0]["interval"]["lower_rank"], percentile_interval(10, 99, 0.95).lower_rank);
  EXPECT_EQ(first["slos"][0]["interval"]["lower"], 0.1);
  EXPECT_EQ(second["decided_by"], "interval");
  EXPECT_EQ(second["slos"][0]["verdict"], "missed");
  EXPECT_EQ(second["slos"][0]["above_limit"], 10);
  // Every step carries its own latency percentiles, SLO metric or not (for plotting).
  EXPECT_EQ(second["latency"]["ttft"]["p99"], 0.5);
  EXPECT_DOUBLE_EQ(first["latency"]["e2e"]["max"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(first["latency"]["tpot"]["mean"].get<double>(), good.tpot.mean);
}

TEST(Report, MissingKeysAreNamed) {
  OrderedJson j = to_json(sample_summary());
  j["ttft"].erase("p99");
  try {
    summary_from_json(j);
    FAIL() << "accepted a summary without ttft.p99";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "report summary.ttft: missing or mistyped \"p99\"");
  }
}

}  // namespace
}  // namespace db::loadtest

// The lines the capacity search prints per step: the count above the percentile, the
// interval with its ranks, the verdict, how the step was decided, and the warning.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loadtest/step_log.h"

namespace db::loadtest {
namespace {

// 49 requests with TTFTs 0.2..0.248 s and one of 5 s.
std::vector<RequestResult> step_log_run() {
  std::vector<RequestResult> run(50);
  for (size_t i = 0; i < run.size(); ++i) {
    run[i].ok = true;
    run[i].ttft = i == 0 ? 5.0 : 0.2 + 0.001 * static_cast<double>(i - 1);
    run[i].e2e = run[i].ttft + 0.5;
    run[i].output_tokens = 10;
  }
  return run;
}

// ttft p99 <= 1 s from 4 req/s, undecided steps pooling up to `max_step_requests`.
CapacityFinderConfig step_log_config(int64_t max_step_requests) {
  CapacityFinderConfig config;
  config.slos = {{Metric::TTFT, 99, 1.0}};
  config.start_rate = 4;
  config.max_step_requests = max_step_requests;
  return config;
}

std::string step_log_joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return all;
}

TEST(StepLog, UndecidedStepShowsItsIntervalAndWarns) {
  const CapacityFinderConfig config = step_log_config(1000);
  CapacityFinder finder(config);
  const std::vector<std::string> lines = describe_step(finder.record(step_log_run(), 12.5), config);
  ASSERT_EQ(lines.size(), 3u) << step_log_joined(lines);
  EXPECT_EQ(lines[0],
            "step 0 (ramp, 4.000 req/s): 50 requests in 1 run, 4.00 req/s achieved: undecided, adding requests");
  // p99 of 50: rank 48.51 (from 0) between 0.248 s and 5 s; x(48) is the 48th smallest.
  EXPECT_EQ(lines[1], "  ttft p99 <= 1 s: p99 = 2671.5 ms over 50 samples (1 above it, 1 above the limit), "
                      "95% CI [x(48) = 247.0 ms, open]: undecided");
  EXPECT_EQ(lines[2], "  warning: 50 samples are too few for ttft p99: the interval's upper end is not a sample below "
                      "the maximum (555 samples make it one)");
}

TEST(StepLog, DecidedStepsSayHow) {
  const CapacityFinderConfig config = step_log_config(100);
  CapacityFinder finder(config);
  finder.record(step_log_run(), 12.5);
  const std::vector<std::string> capped = describe_step(finder.record(step_log_run(), 12.5), config);
  const std::string text = step_log_joined(capped);
  EXPECT_NE(text.find("100 requests in 2 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("SLOs violated on the point estimates: the intervals stayed undecided (cap 100 requests)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 above the limit"), std::string::npos) << text;
  EXPECT_NE(text.find("undecided, missed on the estimate"), std::string::npos) << text;

  const CapacityFinderConfig at_once_config = step_log_config(0);
  CapacityFinder at_once(at_once_config);
  const std::string at_once_text = step_log_joined(describe_step(at_once.record(step_log_run(), 12.5), at_once_config));
  EXPECT_NE(at_once_text.find("SLOs violated on the point estimates: the intervals were undecided (no runs added)"),
            std::string::npos)
      << at_once_text;

  std::vector<RequestResult> slow = step_log_run();
  for (RequestResult& r : slow) r.ttft += 2;
  const std::string missed = step_log_joined(describe_step(finder.record(slow, 12.5), config));
  EXPECT_NE(missed.find("SLOs violated by the intervals"), std::string::npos) << missed;
  EXPECT_NE(missed.find("50 above the limit"), std::string::npos) << missed;
  EXPECT_NE(missed.find(": missed\n"), std::string::npos) << missed;

  // Another SLO's interval decided the step: an undecided one is not judged on its estimate.
  CapacityFinderConfig two = step_log_config(1000);
  two.slos.push_back({Metric::E2E, 99, 0.6});  // every E2E is at least 0.7 s: missed
  CapacityFinder two_slos(two);
  const std::vector<std::string> two_lines = describe_step(two_slos.record(step_log_run(), 12.5), two);
  ASSERT_GE(two_lines.size(), 4u);
  EXPECT_NE(two_lines[0].find("SLOs violated by the intervals"), std::string::npos) << two_lines[0];
  EXPECT_TRUE(two_lines[1].ends_with(": undecided")) << two_lines[1];
  EXPECT_TRUE(two_lines[3].ends_with(": missed")) << two_lines[3];

  std::vector<RequestResult> failed = step_log_run();
  for (RequestResult& r : failed) r.ok = false;
  const std::string errors = step_log_joined(describe_step(finder.record(failed, 12.5), config));
  EXPECT_NE(errors.find("SLOs violated: 50 of 50 requests failed"), std::string::npos) << errors;
}

}  // namespace
}  // namespace db::loadtest

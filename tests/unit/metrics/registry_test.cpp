#include "metrics/registry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "util/error.h"

namespace db::metrics {
namespace {

TEST(Registry, RendersCounterWithLabelsInExpositionFormat) {
  Registry reg;
  auto& c = reg.counter("deepbatch:request_success_total", "Finished requests.", {"finished_reason"});
  c.labels({"stop"}).inc();
  c.labels({"stop"}).inc(2);
  c.labels({"length"}).inc();
  EXPECT_EQ(reg.render(),
            "# HELP deepbatch:request_success_total Finished requests.\n"
            "# TYPE deepbatch:request_success_total counter\n"
            "deepbatch:request_success_total{finished_reason=\"length\"} 1\n"
            "deepbatch:request_success_total{finished_reason=\"stop\"} 3\n");
}

TEST(Registry, GaugeWithoutLabelsAndFractionalValue) {
  Registry reg;
  auto& g = reg.gauge("deepbatch:kv_cache_usage_perc", "KV usage.").labels({});
  g.set(0.25);
  g.inc(0.5);
  g.dec(0.125);
  EXPECT_EQ(reg.render(),
            "# HELP deepbatch:kv_cache_usage_perc KV usage.\n"
            "# TYPE deepbatch:kv_cache_usage_perc gauge\n"
            "deepbatch:kv_cache_usage_perc 0.625\n");
}

TEST(Registry, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry reg;
  auto& h = reg.histogram("lat_seconds", "Latency.", {0.1, 1, 2.5}).labels({});
  for (double v : {0.05, 0.1, 0.5, 3.0}) h.observe(v);
  EXPECT_EQ(reg.render(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_bucket{le=\"0.1\"} 2\n"
            "lat_seconds_bucket{le=\"1\"} 3\n"
            "lat_seconds_bucket{le=\"2.5\"} 3\n"
            "lat_seconds_bucket{le=\"+Inf\"} 4\n"
            "lat_seconds_sum 3.65\n"
            "lat_seconds_count 4\n");
}

TEST(Registry, HistogramLabelsPrecedeLe) {
  Registry reg;
  reg.histogram("h", "x", {1}, {"model"}).labels({"m"}).observe(2);
  const std::string text = reg.render();
  EXPECT_NE(text.find("h_bucket{model=\"m\",le=\"1\"} 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_bucket{model=\"m\",le=\"+Inf\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h_count{model=\"m\"} 1\n"), std::string::npos) << text;
}

TEST(Registry, EscapesLabelValuesAndHelp) {
  Registry reg;
  reg.counter("c_total", "line1\nback\\slash", {"path"}).labels({"a\"b\\c\nd"}).inc();
  EXPECT_EQ(reg.render(),
            "# HELP c_total line1\\nback\\\\slash\n"
            "# TYPE c_total counter\n"
            "c_total{path=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(Registry, RejectsBadNamesDuplicatesAndArity) {
  Registry reg;
  EXPECT_THROW(reg.counter("1bad", "x"), Error);
  EXPECT_THROW(reg.counter("ok", "x", {"le"}), Error);
  EXPECT_THROW(reg.histogram("h", "x", {2, 1}), Error);
  reg.counter("dup", "x");
  EXPECT_THROW(reg.gauge("dup", "x"), Error);
  auto& f = reg.counter("two", "x", {"a", "b"});
  EXPECT_THROW(f.labels({"only one"}), Error);
}

TEST(Registry, FamilyWithSeveralNamesRendersEachWithTheSameValues) {
  Registry reg;
  auto& h = reg.histogram(std::vector<std::string>{"a:lat", "b:lat"}, "Latency", {1}, {"m"});
  h.labels({"x"}).observe(0.5);
  const std::string text = reg.render();
  for (const std::string name : {"a:lat", "b:lat"}) {
    EXPECT_NE(text.find("# TYPE " + name + " histogram\n"), std::string::npos) << text;
    EXPECT_NE(text.find(name + "_bucket{m=\"x\",le=\"1\"} 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find(name + "_count{m=\"x\"} 1\n"), std::string::npos) << text;
  }
  EXPECT_THROW(reg.counter(std::vector<std::string>{}, "x"), Error);
  EXPECT_THROW(reg.counter(std::vector<std::string>{"c:n", "c:n"}, "x"), Error);  // twice in one family
  EXPECT_THROW(reg.gauge(std::vector<std::string>{"fresh", "b:lat"}, "x"), Error);  // another family's name
}

TEST(Counter, IgnoresNegativeIncrementsAndRaiseToNeverLowers) {
  Counter c;
  c.inc(5);
  c.inc(-3);
  c.raise_to(4);
  EXPECT_EQ(c.value(), 5);
  c.raise_to(9);
  EXPECT_EQ(c.value(), 9);
}

TEST(FormatValue, SpecialValues) {
  EXPECT_EQ(format_value(1.0 / 0.0), "+Inf");
  EXPECT_EQ(format_value(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(format_value(0.0 / 0.0), "NaN");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(1e21), "1e+21");
}

TEST(Registry, ConcurrentUpdatesAreAllCounted) {
  Registry reg;
  auto& fam = reg.counter("n_total", "x", {"t"});
  auto& hist = reg.histogram("h", "x", {1}).labels({});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        fam.labels({"x"}).inc();
        hist.observe(0.5);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(fam.labels({"x"}).value(), 40000);
  EXPECT_EQ(hist.snapshot().count, 40000u);
}

}  // namespace
}  // namespace db::metrics

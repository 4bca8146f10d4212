// Progress lines and the summary.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "batch/progress.h"

namespace db::batch {
namespace {

TEST(Progress, Durations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(125), "2m05s");
  EXPECT_EQ(format_duration(3723), "1h02m03s");
  EXPECT_EQ(format_duration(-1), "--");
}

TEST(Progress, Line) {
  ProgressSnapshot s;
  s.done = 25;
  s.total = 100;
  s.failed = 2;
  s.generated_tokens = 5000;
  s.elapsed_seconds = 10;
  const std::string bar = format_progress(s, 20);
  EXPECT_EQ(bar.rfind("[#####...............] 25/100  25.0%", 0), 0u) << bar;
  EXPECT_NE(bar.find("2 failed"), std::string::npos);
  EXPECT_NE(bar.find("500 tok/s"), std::string::npos);
  EXPECT_NE(bar.find("ETA 30s"), std::string::npos);
  const std::string plain = format_progress(s, 0);
  EXPECT_EQ(plain.rfind("25/100", 0), 0u) << plain;
  s.done = 0;
  EXPECT_NE(format_progress(s, 0).find("ETA --"), std::string::npos);
  s.done = s.total = 0;
  EXPECT_NE(format_progress(s, 0).find("100.0%"), std::string::npos);
}

TEST(Progress, PlainReporterPrintsLines) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressReporter r(f, /*tty=*/false, /*plain_interval_seconds=*/0.0);
  ProgressSnapshot s;
  s.total = 4;
  s.done = 1;
  r.update(s);
  s.done = 4;
  r.finish(s);
  std::rewind(f);
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const std::string text(buf, n);
  EXPECT_NE(text.find("1/4"), std::string::npos) << text;
  EXPECT_NE(text.find("4/4"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
}

TEST(Progress, Summary) {
  BatchSummary s;
  s.input_lines = 10;
  s.ok = 6;
  s.failed = 1;
  s.skipped = 3;
  s.prompt_tokens = 600;
  s.generated_tokens = 400;
  s.wall_seconds = 2.0;
  const std::string text = format_summary(s, "out.jsonl");
  EXPECT_NE(text.find("6 ok, 1 failed, 3 skipped"), std::string::npos) << text;
  EXPECT_NE(text.find("600 prompt"), std::string::npos);
  EXPECT_NE(text.find("400 generated"), std::string::npos);
  EXPECT_NE(text.find("3.50 requests/s"), std::string::npos) << text;
  EXPECT_NE(text.find("200.0 generated tokens/s"), std::string::npos);
  EXPECT_NE(text.find("500.0 total tokens/s"), std::string::npos);
  EXPECT_NE(text.find("completion order"), std::string::npos);
}

}  // namespace
}  // namespace db::batch

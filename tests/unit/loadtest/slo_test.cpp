// parse_slo: the --slo forms it takes and the ones it rejects with a message naming --slo.
#include <gtest/gtest.h>

#include <string>

#include "loadtest/slo.h"
#include "util/error.h"

namespace db::loadtest {
namespace {

TEST(ParseSlo, TakesSecondsMillisecondsAndBareNumbers) {
  const Slo a = parse_slo("ttft:p99:1s");
  EXPECT_EQ(a.metric, Metric::TTFT);
  EXPECT_EQ(a.percentile, 99);
  EXPECT_DOUBLE_EQ(a.limit_s, 1.0);

  const Slo b = parse_slo("tpot:p95:100ms");
  EXPECT_EQ(b.metric, Metric::TPOT);
  EXPECT_EQ(b.percentile, 95);
  EXPECT_DOUBLE_EQ(b.limit_s, 0.1);

  const Slo c = parse_slo("e2e:p90:2.5");  // a bare number is seconds
  EXPECT_EQ(c.metric, Metric::E2E);
  EXPECT_EQ(c.percentile, 90);
  EXPECT_DOUBLE_EQ(c.limit_s, 2.5);

  const Slo d = parse_slo("itl:p99:0.25s");
  EXPECT_EQ(d.metric, Metric::ITL);
  EXPECT_DOUBLE_EQ(d.limit_s, 0.25);
  EXPECT_EQ(d.describe(), "itl p99 <= 0.25 s");
}

TEST(ParseSlo, RejectsMalformedTextNamingTheOption) {
  for (const std::string bad : {
           "",                  // empty
           "ttft",              // one field
           "ttft:p99",          // two fields
           "ttft:p99:1s:2",     // four fields
           "foo:p99:1s",        // unknown metric
           "TTFT:p99:1s",       // metric names are lower case
           "ttft:99:1s",        // no 'p'
           "ttft:p:1s",         // no percentile number
           "ttft:p50:1s",       // a percentile the finder does not size steps for
           "ttft:p99.9:1s",     // likewise
           "ttft:p99x:1s",      // trailing text after the percentile
           "ttft:p99:",         // no limit
           "ttft:p99:s",        // a unit without a number
           "ttft:p99:ms",       // likewise
           "ttft:p99:1h",       // an unknown unit
           "ttft:p99:1 s",      // blank inside
           "ttft:p99: 1s",      // leading blank
           "ttft:p99:0s",       // not > 0
           "ttft:p99:-5ms",     // negative
           "ttft:p99:inf",      // not finite
           "ttft:p99:nan",      // not a number
       }) {
    try {
      parse_slo(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("--slo"), std::string::npos) << what;
      EXPECT_NE(what.find("'" + bad + "'"), std::string::npos) << what;
    }
  }
}

TEST(ParseSlo, SaysWhichFieldIsWrong) {
  const auto message = [](const std::string& text) {
    try {
      parse_slo(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("foo:p99:1s").find("unknown latency metric 'foo'"), std::string::npos);
  EXPECT_NE(message("ttft:p50:1s").find("p90, p95 or p99"), std::string::npos);
  EXPECT_NE(message("ttft:p99:1h").find("the limit"), std::string::npos);
}

}  // namespace
}  // namespace db::loadtest

// RequestReader on its own: the head checks of RFC 9112 the server relies on, the
// normalized target handed to routing, and the body budget.
#include "http/request_reader.h"

#include <gtest/gtest.h>

namespace db::http {
namespace {

RequestReader::Outcome feed_all(RequestReader& r, std::string bytes) { return r.feed(bytes); }

TEST(RequestReader, Http11NeedsExactlyOneHost) {
  {
    RequestReader r(16 << 10, 1 << 20);
    auto out = feed_all(r, "GET /v1/models HTTP/1.1\r\n\r\n");
    EXPECT_EQ(out.status, RequestReader::Status::error);
    EXPECT_EQ(out.http_status, 400);
    EXPECT_NE(out.message.find("Host"), std::string::npos);
  }
  {
    RequestReader r(16 << 10, 1 << 20);
    auto out = feed_all(r, "GET /v1/models HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    EXPECT_EQ(out.http_status, 400);
    EXPECT_NE(out.message.find("more than one Host"), std::string::npos);
  }
  {
    RequestReader r(16 << 10, 1 << 20);
    EXPECT_EQ(feed_all(r, "GET /v1/models HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n").http_status, 400);
  }
  RequestReader ok(16 << 10, 1 << 20);
  EXPECT_EQ(feed_all(ok, "GET /v1/models HTTP/1.0\r\n\r\n").status, RequestReader::Status::done);
  ok.take("peer");
  EXPECT_EQ(feed_all(ok, "GET /v1/models HTTP/1.1\r\nhost: a\r\n\r\n").status, RequestReader::Status::done);
}

TEST(RequestReader, EmptyLinesBeforeTheRequestLineAreSkipped) {
  RequestReader r(16 << 10, 1 << 20);
  std::string in = "\r\n\r\nGET /a HTTP/1.1\r\nHost: t\r\n\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(r.feed(in).status, RequestReader::Status::done);
  EXPECT_EQ(r.take("p").path, "/a");
  ASSERT_EQ(r.feed(in).status, RequestReader::Status::done);  // a pipelined request after a stray CRLF
  EXPECT_EQ(r.take("p").path, "/b");
  EXPECT_TRUE(in.empty());
}

TEST(RequestReader, TheTargetIsNormalizedOrRefused) {
  RequestReader r(16 << 10, 1 << 20);
  std::string in = "GET http://h:1/v1/../%76%31/models?x=%41 HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(r.feed(in).status, RequestReader::Status::done);
  Request req = r.take("p");
  EXPECT_EQ(req.path, "/v1/models");
  EXPECT_EQ(req.query, "x=%41");
  EXPECT_EQ(req.target, "http://h:1/v1/../%76%31/models?x=%41");
  for (const char* target : {"v1/completions", "*", "/v1%2Fmodels", "/../v1/models"}) {
    RequestReader fresh(16 << 10, 1 << 20);
    auto out = feed_all(fresh, std::string("GET ") + target + " HTTP/1.1\r\nHost: t\r\n\r\n");
    EXPECT_EQ(out.status, RequestReader::Status::error) << target;
    EXPECT_EQ(out.http_status, 400) << target;
    EXPECT_NE(out.message.find("request-target"), std::string::npos) << target;
  }
}

TEST(RequestReader, BodiesBeyondTheBudgetAre503AndLeasesComeBack) {
  auto budget = std::make_shared<BodyBudget>(100);
  RequestReader a(16 << 10, 1 << 20, budget), b(16 << 10, 1 << 20, budget);
  std::string first = "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 60\r\n\r\n" + std::string(60, 'a');
  ASSERT_EQ(a.feed(first).status, RequestReader::Status::done);
  Request held = a.take("p");
  EXPECT_EQ(budget->held(), 60u);  // reserved until the request (or whoever takes its lease) is done
  auto refused = feed_all(b, "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 50\r\n\r\n");
  EXPECT_EQ(refused.status, RequestReader::Status::error);
  EXPECT_EQ(refused.http_status, 503);
  { Request gone = std::move(held); }
  EXPECT_EQ(budget->held(), 0u);
  RequestReader c(16 << 10, 1 << 20, budget);
  std::string second = "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 50\r\n\r\n" + std::string(50, 'b');
  ASSERT_EQ(c.feed(second).status, RequestReader::Status::done);
  EXPECT_EQ(c.take("p").body.size(), 50u);
  EXPECT_EQ(budget->held(), 0u);
}

TEST(RequestReader, ChunkedBodiesAreCountedAsTheyGrow) {
  auto budget = std::make_shared<BodyBudget>(100);
  BodyLease other(budget);
  ASSERT_TRUE(other.grow_to(70));
  RequestReader r(16 << 10, 1 << 20, budget);
  std::string in = "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(r.feed(in).status, RequestReader::Status::need_more);
  in += "14\r\n" + std::string(20, 'c') + "\r\n";  // 0x14 = 20 bytes
  EXPECT_EQ(r.feed(in).status, RequestReader::Status::need_more);
  EXPECT_EQ(budget->held(), 90u);
  in += "14\r\n" + std::string(20, 'c') + "\r\n";
  auto out = r.feed(in);
  EXPECT_EQ(out.status, RequestReader::Status::error);
  EXPECT_EQ(out.http_status, 503) << out.message;
}

TEST(BodyBudget, ZeroCapacityMeansNoCapAndLeasesMoveTheirBytes) {
  auto unlimited = std::make_shared<BodyBudget>(0);
  BodyLease big(unlimited);
  EXPECT_TRUE(big.grow_to(size_t{1} << 40));
  auto budget = std::make_shared<BodyBudget>(10);
  BodyLease a(budget);
  EXPECT_TRUE(a.grow_to(10));
  EXPECT_FALSE(BodyLease(budget).grow_to(1));
  BodyLease b = std::move(a);
  EXPECT_EQ(budget->held(), 10u);
  b.reset();
  EXPECT_EQ(budget->held(), 0u);
}

}  // namespace
}  // namespace db::http

// Protocol errors and timeouts answered by the transport itself: 400, 408, 413, 431,
// idle and write timeouts. Every error has the JSON error body and closes the connection.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "test_client.h"

namespace db::http {
namespace {
using testing::Client;

struct CountingServer {
  std::atomic<int> requests{0};
  std::unique_ptr<Server> server;
  explicit CountingServer(ServerOptions opts = testing::test_options()) {
    server = testing::start_server(std::move(opts), [this](Request&& req, std::shared_ptr<Responder> res) {
      ++requests;
      res->send(200, {}, "ok:" + std::to_string(req.body.size()));
    });
  }
  int port() const { return server->port(); }
};

// Sends `bytes` and expects a JSON error `status`, then the connection closing.
void expect_error(int port, const std::string& bytes, int status) {
  Client c(port);
  c.try_send(bytes);
  auto r = c.read_response();
  ASSERT_TRUE(r) << "no response to: " << bytes.substr(0, 80);
  EXPECT_EQ(r->status, status) << r->body;
  EXPECT_EQ(r->header("content-type"), "application/json");
  EXPECT_EQ(r->header("connection"), "close");
  EXPECT_EQ(r->body.rfind("{\"error\":{\"code\":" + std::to_string(status), 0), 0u) << r->body;
  EXPECT_TRUE(c.wait_closed_or_reset(2.0));
}

TEST(HttpLimits, BodyOverLimitIs413FromContentLengthAlone) {
  CountingServer s;
  // The body is never sent: the answer must come from the head.
  expect_error(s.port(), "POST /u HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n", 413);
  EXPECT_EQ(s.requests.load(), 0);
}

TEST(HttpLimits, ChunkedBodyOverLimitIs413OnceExceeded) {
  CountingServer s;
  std::string req = "POST /u HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunk(64 * 1024, 'q');
  for (int i = 0; i < 17; ++i) req += "10000\r\n" + chunk + "\r\n";  // 17 x 64 KiB > 1 MiB
  expect_error(s.port(), req, 413);
  EXPECT_EQ(s.requests.load(), 0);
}

TEST(HttpLimits, BodyAtLimitIsAccepted) {
  CountingServer s;
  Client c(s.port());
  c.send("POST /u HTTP/1.1\r\nHost: t\r\nContent-Length: 1048576\r\n\r\n" + std::string(1 << 20, 'x'));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "ok:1048576");
}

TEST(HttpLimits, HeaderOverLimitIs431) {
  CountingServer s;
  expect_error(s.port(), "GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(8000, 'h') + "\r\n\r\n", 431);
  // Also when the oversized head is still incomplete.
  expect_error(s.port(), "GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(8000, 'h'), 431);
}

TEST(HttpLimits, MalformedRequestsAre400) {
  CountingServer s;
  expect_error(s.port(), "THIS IS NOT HTTP\r\n\r\n", 400);
  expect_error(s.port(), "GET / HTTP/1.1\r\nHost: t\r\nBad Header Line\r\n\r\n", 400);
  expect_error(s.port(), "GET / HTTP/9.9\r\n\r\n", 400);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n", 400);
  EXPECT_EQ(s.requests.load(), 0);
}

TEST(HttpLimits, UnsupportedTransferEncodingAndBadContentLengthAre400) {
  CountingServer s;
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n", 400);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 400);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n", 400);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: -5\r\n\r\n", 400);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", 400);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
  EXPECT_EQ(s.requests.load(), 0);
}

TEST(HttpLimits, UnknownExpectationIs417) {
  CountingServer s;
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nExpect: something-else\r\n\r\nx", 417);
  EXPECT_EQ(s.requests.load(), 0);
}

TEST(HttpLimits, SlowlorisHeadIs408WhileOthersAreServed) {
  CountingServer s;
  Client slow(s.port());
  const std::string head = "GET /slow HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
  auto start = std::chrono::steady_clock::now();
  bool cut_off = false;
  for (size_t i = 0; i < head.size(); ++i) {  // one byte every 20 ms: ~1.7 s in all, far past the 0.3 s limit
    if (!slow.try_send(head.substr(i, 1))) {
      cut_off = true;
      break;
    }
    if (i == 3) {  // meanwhile a well-behaved client is served at once
      Client good(s.port());
      good.send("GET /fast HTTP/1.1\r\nHost: t\r\n\r\n");
      auto r = good.read_response();
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 200);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(600)) break;
  }
  EXPECT_TRUE(cut_off || std::chrono::steady_clock::now() - start > std::chrono::milliseconds(300));
  auto r = slow.read_response();
  ASSERT_TRUE(r) << "expected a 408 for the trickled head";
  EXPECT_EQ(r->status, 408);
  EXPECT_EQ(r->header("content-type"), "application/json");
  EXPECT_TRUE(slow.wait_closed_or_reset(2.0));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(1500));
  EXPECT_EQ(s.requests.load(), 1);
}

TEST(HttpLimits, SlowBodyIs408) {
  CountingServer s;
  Client c(s.port());
  c.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 408);
  EXPECT_TRUE(c.wait_closed_or_reset(2.0));
  EXPECT_EQ(s.requests.load(), 0);
}

TEST(HttpLimits, IdleKeepAliveConnectionIsClosed) {
  CountingServer s;
  Client c(s.port());
  c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(c.read_response());
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.wait_closed(2.0));  // closed quietly, no 408 on an idle connection
  EXPECT_GT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_TRUE(testing::wait_until([&] { return s.server->open_connections() == 0; }));
}

TEST(HttpLimits, SlowlyReadLargeResponseOutlastsIdleTimeout) {
  auto opts = testing::test_options();
  opts.idle_timeout_s = 0.2;  // the response takes longer than this to drain
  opts.write_timeout_s = 3;
  const std::string big(8u << 20, 'b');
  auto server = testing::start_server(opts, [&](Request&&, std::shared_ptr<Responder> res) {
    res->send(200, {}, big);
  });
  Client c(server->port(), 5.0, /*rcvbuf_bytes=*/65536);
  c.send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n");
  auto head = c.read_head();
  ASSERT_TRUE(head);
  ASSERT_EQ(head->header("content-length"), std::to_string(big.size()));
  std::string body;
  while (body.size() < big.size()) {
    const size_t before = body.size();
    ASSERT_TRUE(c.read_some(&body)) << "connection ended after " << body.size() << " bytes";
    if (body.size() % (1u << 20) < body.size() - before) std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  EXPECT_EQ(body.size(), big.size());
}

TEST(HttpLimits, SilentNewConnectionIsClosed) {
  CountingServer s;
  Client c(s.port());
  EXPECT_TRUE(c.wait_closed(2.0));
}

TEST(HttpLimits, ClientNotReadingIsDroppedAfterWriteTimeout) {
  std::atomic<bool> gone{false};
  std::atomic<bool> stop_writing{false};
  std::thread engine;
  auto opts = testing::test_options();
  auto server = testing::start_server(opts, [&](Request&&, std::shared_ptr<Responder> res) {
    res->on_client_gone([&] { gone = true; });
    res->begin_stream(200, {{"Content-Type", "text/event-stream"}});
    engine = std::thread([res, &stop_writing] {
      const std::string chunk(64 * 1024, 'w');
      for (int i = 0; i < 1024 && !stop_writing && !res->client_gone(); ++i) {  // up to 64 MiB
        res->write(chunk);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  });
  Client c(server->port(), 5.0, /*rcvbuf_bytes=*/4096);
  c.send("GET /events HTTP/1.1\r\nHost: t\r\n\r\n");
  // Never read: the server must give up once its writes stall for write_timeout.
  EXPECT_TRUE(testing::wait_until([&] { return gone.load(); }, 5.0));
  EXPECT_TRUE(testing::wait_until([&] { return server->open_connections() == 0; }));
  stop_writing = true;
  if (engine.joinable()) engine.join();
}

}  // namespace
}  // namespace db::http

namespace db::http {
namespace {

TEST(HttpLimits, EveryTransportErrorIsReportedToTheHook) {
  ServerOptions opts = testing::test_options();
  opts.max_body_bytes = 1000;
  auto seen = std::make_shared<std::vector<int>>();
  auto mu = std::make_shared<std::mutex>();
  opts.on_protocol_error = [seen, mu](int status) {
    std::lock_guard lock(*mu);
    seen->push_back(status);
  };
  CountingServer s(opts);
  expect_error(s.port(), "POST /u HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n", 413);
  expect_error(s.port(), "GET / HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(8000, 'h') + "\r\n\r\n", 431);
  expect_error(s.port(), "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nExpect: nope\r\n\r\nx", 417);
  expect_error(s.port(), "GET v1/models HTTP/1.1\r\nHost: t\r\n\r\n", 400);
  expect_error(s.port(), "GET / HTTP/1.1\r\n\r\n", 400);
  std::lock_guard lock(*mu);
  EXPECT_EQ(*seen, (std::vector<int>{413, 431, 417, 400, 400}));
  EXPECT_EQ(s.requests.load(), 0);
}

TEST(HttpLimits, BodiesBeyondTheServerWideBudgetAre503WithRetryAfter) {
  ServerOptions opts = testing::test_options();
  opts.max_body_bytes_in_flight = 1000;
  CountingServer s(opts);
  Client slow(s.port());  // holds 800 bytes of budget while its body trickles in
  slow.send("POST /u HTTP/1.1\r\nHost: t\r\nContent-Length: 800\r\n\r\nabc");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Client c(s.port());
  c.try_send("POST /u HTTP/1.1\r\nHost: t\r\nContent-Length: 300\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->header("retry-after"), "1");
  slow.send(std::string(797, 'x'));
  auto done = slow.read_response();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->body, "ok:800");
  Client after(s.port());  // the budget came back with the finished request
  after.send("POST /u HTTP/1.1\r\nHost: t\r\nContent-Length: 300\r\n\r\n" + std::string(300, 'y'));
  auto ok = after.read_response();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->body, "ok:300");
}

}  // namespace
}  // namespace db::http

// Request/response framing over real loopback sockets: keep-alive, HTTP/1.0,
// Connection: close, pipelining, Content-Length and chunked request bodies, 100-continue.
#include <gtest/gtest.h>

#include <atomic>

#include "test_client.h"

namespace db::http {
namespace {
using testing::Client;
using testing::ClientResponse;

// Answers "<method> <path> ?<query> [<x-tag header>] <body>" and records the request.
struct EchoServer {
  std::atomic<int> requests{0};
  std::string last_remote;
  std::unique_ptr<Server> server;

  explicit EchoServer(ServerOptions opts = testing::test_options()) {
    server = testing::start_server(std::move(opts), [this](Request&& req, std::shared_ptr<Responder> res) {
      ++requests;
      last_remote = req.remote;
      const std::string* tag = req.header("x-tag");
      std::string body = req.method + " " + req.path + " ?" + req.query + " [" + (tag ? *tag : "") + "] " + req.body;
      res->send(200, {{"Content-Type", "text/plain"}, {"X-Echo", "1"}}, std::move(body));
    });
  }
  int port() const { return server->port(); }
};

TEST(HttpProtocol, KeepAliveServesSeveralRequestsOnOneConnection) {
  EchoServer echo;
  Client c(echo.port());
  ASSERT_TRUE(c.connected());
  for (int i = 0; i < 5; ++i) {
    c.send("GET /a/" + std::to_string(i) + "?q=" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\nX-Tag:  t" +
           std::to_string(i) + "  \r\n\r\n");
    auto r = c.read_response();
    ASSERT_TRUE(r) << "request " << i;
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "GET /a/" + std::to_string(i) + " ?q=" + std::to_string(i) + " [t" + std::to_string(i) + "] ");
    EXPECT_EQ(r->header("content-length"), std::to_string(r->body.size()));
    EXPECT_EQ(r->header("x-echo"), "1");
    EXPECT_FALSE(r->has_header("connection"));
  }
  EXPECT_EQ(echo.requests.load(), 5);
  EXPECT_EQ(echo.server->open_connections(), 1u);
  EXPECT_EQ(echo.last_remote.rfind("127.0.0.1:", 0), 0u);
}

TEST(HttpProtocol, Http10ClosesAfterTheResponse) {
  EchoServer echo;
  Client c(echo.port());
  c.send("GET /old HTTP/1.0\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "GET /old ? [] ");
  EXPECT_EQ(r->header("connection"), "close");
  EXPECT_TRUE(c.wait_closed(2.0));
}

TEST(HttpProtocol, Http10KeepAliveIsHonoured) {
  EchoServer echo;
  Client c(echo.port());
  for (int i = 0; i < 2; ++i) {
    c.send("GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    auto r = c.read_response();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->header("connection"), "keep-alive");
  }
}

TEST(HttpProtocol, ConnectionCloseIsHonoured) {
  EchoServer echo;
  Client c(echo.port());
  c.send("GET /bye HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->header("connection"), "close");
  EXPECT_TRUE(c.wait_closed(2.0));
  c.close();
  EXPECT_TRUE(testing::wait_until([&] { return echo.server->open_connections() == 0; }));
}

TEST(HttpProtocol, PipelinedRequestsAreAnsweredInOrder) {
  EchoServer echo;
  Client c(echo.port());
  std::string batch;
  for (int i = 0; i < 10; ++i) {
    if (i % 3 == 1) {
      batch += "POST /p/" + std::to_string(i) + " HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nb" + std::to_string(i) + "x";
    } else {
      batch += "GET /p/" + std::to_string(i) + " HTTP/1.1\r\nHost: t\r\n\r\n";
    }
  }
  c.send(batch);
  for (int i = 0; i < 10; ++i) {
    auto r = c.read_response();
    ASSERT_TRUE(r) << "response " << i;
    if (i % 3 == 1) {
      EXPECT_EQ(r->body, "POST /p/" + std::to_string(i) + " ? [] b" + std::to_string(i) + "x");
    } else {
      EXPECT_EQ(r->body, "GET /p/" + std::to_string(i) + " ? [] ");
    }
  }
}

TEST(HttpProtocol, PipelineStopsAtConnectionClose) {
  EchoServer echo;
  Client c(echo.port());
  c.send("GET /1 HTTP/1.1\r\nHost: t\r\n\r\nGET /2 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /3 HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r1 = c.read_response();
  auto r2 = c.read_response();
  ASSERT_TRUE(r1 && r2);
  EXPECT_EQ(r1->body, "GET /1 ? [] ");
  EXPECT_EQ(r2->body, "GET /2 ? [] ");
  EXPECT_EQ(r2->header("connection"), "close");
  EXPECT_TRUE(c.wait_closed(2.0));
  EXPECT_EQ(echo.requests.load(), 2);
}

TEST(HttpProtocol, ContentLengthBodyIsDelivered) {
  EchoServer echo;
  Client c(echo.port());
  std::string payload(200000, 'z');
  payload[0] = 'a';
  payload.back() = 'b';
  c.send("POST /up?x=1 HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(payload.size()) + "\r\n\r\n");
  c.send(payload.substr(0, 1000));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.send(payload.substr(1000));
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "POST /up ?x=1 [] " + payload);
}

TEST(HttpProtocol, ChunkedBodyIsDecoded) {
  EchoServer echo;
  Client c(echo.port());
  c.send("POST /chunks HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.send("1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "POST /chunks ? [] hello 0123456789");
  c.send("GET /after HTTP/1.1\r\nHost: t\r\n\r\n");  // the connection is still in sync
  r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /after ? [] ");
}

TEST(HttpProtocol, ExpectContinueGets100BeforeTheBody) {
  EchoServer echo;
  Client c(echo.port());
  c.send("POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  auto interim = c.read_response();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  c.send("data");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "POST /big ? [] data");
}

TEST(HttpProtocol, HeadRequestGetsHeadOnly) {
  EchoServer echo;
  Client c(echo.port());
  c.send("HEAD /h HTTP/1.1\r\nHost: t\r\n\r\nGET /g HTTP/1.1\r\nHost: t\r\n\r\n");
  auto head = c.read_head();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->header("content-length"), "13");  // the size of "HEAD /h ? [] ", which is not sent
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /g ? [] ");
}

TEST(HttpProtocol, HandlerExceptionBecomes500) {
  auto server = testing::start_server(testing::test_options(), [](Request&&, std::shared_ptr<Responder>) {
    throw std::runtime_error("boom");
  });
  Client c(server->port());
  c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  auto r = c.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500);
  EXPECT_EQ(r->header("content-type"), "application/json");
  EXPECT_NE(r->body.find("boom"), std::string::npos);
}

}  // namespace
}  // namespace db::http

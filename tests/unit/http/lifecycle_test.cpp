// Server lifecycle: bind errors, max_connections, stop_accepting, stop, and responders
// outliving their connection and the server.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "test_client.h"
#include "util/error.h"

namespace db::http {
namespace {
using testing::Client;

Handler ok_handler() {
  return [](Request&&, std::shared_ptr<Responder> res) { res->send(200, {}, "ok"); };
}

bool served(Client& c) {
  if (!c.try_send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")) return false;
  auto r = c.read_response();
  return r && r->status == 200 && r->body == "ok";
}

TEST(HttpLifecycle, BindFailureNamesTheAddress) {
  auto first = testing::start_server(testing::test_options(), ok_handler());
  auto opts = testing::test_options();
  opts.port = first->port();
  try {
    Server second(opts, ok_handler());
    FAIL() << "binding a port in use must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first->port())), std::string::npos)
        << e.what();
  }
  opts.host = "not-an-address";
  EXPECT_THROW(Server(opts, ok_handler()), Error);
}

TEST(HttpLifecycle, ConnectionsBeyondMaxAreClosedAtOnce) {
  auto opts = testing::test_options();
  opts.max_connections = 2;
  opts.idle_timeout_s = 5;
  opts.header_timeout_s = 5;
  auto server = testing::start_server(opts, ok_handler());
  Client a(server->port()), b(server->port());
  ASSERT_TRUE(served(a));
  ASSERT_TRUE(served(b));
  EXPECT_EQ(server->open_connections(), 2u);
  Client extra(server->port());
  ASSERT_TRUE(extra.connected());  // the kernel accepts; the server closes it without a response
  extra.try_send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_TRUE(extra.wait_closed_or_reset(2.0));
  EXPECT_EQ(server->open_connections(), 2u);
  a.close();
  ASSERT_TRUE(testing::wait_until([&] { return server->open_connections() == 1; }));
  Client again(server->port());
  EXPECT_TRUE(served(again));
  EXPECT_TRUE(served(b));
}

TEST(HttpLifecycle, StopAcceptingKeepsServingOpenConnections) {
  auto opts = testing::test_options();
  opts.idle_timeout_s = 5;
  auto server = testing::start_server(opts, ok_handler());
  Client a(server->port());
  ASSERT_TRUE(served(a));
  server->stop_accepting();
  EXPECT_TRUE(testing::wait_until([&] {
    Client probe(server->port());
    return !probe.connected();
  }));
  EXPECT_TRUE(served(a));
  server->stop_accepting();  // twice is fine
}

TEST(HttpLifecycle, StopWakesRespondersAndIsIdempotent) {
  std::mutex mu;
  std::vector<std::shared_ptr<Responder>> parked;
  std::atomic<int> gone{0};
  auto server = testing::start_server(testing::test_options(), [&](Request&&, std::shared_ptr<Responder> res) {
    res->on_client_gone([&] { ++gone; });
    std::lock_guard lock(mu);
    parked.push_back(std::move(res));
  });
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<Client>(server->port()));
    clients.back()->send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n");
  }
  ASSERT_TRUE(testing::wait_until([&] {
    std::lock_guard lock(mu);
    return parked.size() == 3;
  }));
  parked[0]->begin_stream(200, {});
  parked[0]->write("partial");
  server->stop();
  EXPECT_EQ(gone.load(), 3);
  EXPECT_EQ(server->open_connections(), 0u);
  for (auto& c : clients) EXPECT_TRUE(c->wait_closed_or_reset(2.0));
  server->stop();
  server.reset();  // the destructor stops again
  for (auto& res : parked) {  // responders outlive the server: every call is a safe no-op
    EXPECT_TRUE(res->client_gone());
    res->write("x");
    res->end();
    res->send(200, {}, "late");
  }
}

TEST(HttpLifecycle, StreamWrittenFromAnotherThreadWhileServerIsDestroyed) {
  std::shared_ptr<Responder> kept;
  std::atomic<bool> have{false};
  auto server = testing::start_server(testing::test_options(), [&](Request&&, std::shared_ptr<Responder> res) {
    res->begin_stream(200, {});
    kept = res;
    have = true;
  });
  Client c(server->port());
  c.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(testing::wait_until([&] { return have.load(); }));
  std::atomic<bool> done{false};
  std::atomic<long> writes{0};
  std::thread engine([&] {
    while (!done) {  // races with the destruction below
      kept->write("data: x\n\n");
      ++writes;
    }
  });
  ASSERT_TRUE(testing::wait_until([&] { return writes.load() > 100; }));
  server.reset();
  EXPECT_TRUE(kept->client_gone());
  done = true;
  engine.join();
  kept->end();
}

TEST(HttpLifecycle, DestroyWithoutStart) {
  Server server(testing::test_options(), ok_handler());
  EXPECT_GT(server.port(), 0);
  server.stop_accepting();
}

}  // namespace
}  // namespace db::http

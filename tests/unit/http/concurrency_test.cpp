// 1000 simultaneous connections on two I/O threads, each answered with a stream written
// by a separate engine thread.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "test_client.h"

namespace db::http {
namespace {
using testing::Client;

// Raises the soft descriptor limit to at least `needed`; false when the hard limit forbids it.
bool ensure_fd_limit(rlim_t needed) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return false;
  if (lim.rlim_cur >= needed) return true;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < needed) return false;
  lim.rlim_cur = needed;
  return setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

TEST(HttpConcurrency, ThousandSimultaneousStreamsOnTwoIoThreads) {
  constexpr int kConnections = 1000;
  constexpr int kChunks = 5;
  if (!ensure_fd_limit(2 * kConnections + 256)) {
    GTEST_SKIP() << "RLIMIT_NOFILE cannot be raised to " << 2 * kConnections + 256
                 << " descriptors; this test needs one client and one server socket per connection";
  }
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<int, std::shared_ptr<Responder>>> pending;  // (client id, responder)
  auto opts = testing::test_options();
  opts.io_threads = 2;
  opts.header_timeout_s = 10;
  opts.idle_timeout_s = 10;
  opts.write_timeout_s = 10;
  auto server = testing::start_server(opts, [&](Request&& req, std::shared_ptr<Responder> res) {
    std::lock_guard lock(mu);
    pending.emplace_back(std::stoi(req.path.substr(1)), std::move(res));
    cv.notify_all();
  });

  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kConnections; ++i) {
    clients.push_back(std::make_unique<Client>(server->port(), 10.0));
    ASSERT_TRUE(clients.back()->connected()) << "connection " << i;
    clients.back()->send("GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: t\r\n\r\n");
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return pending.size() == kConnections; }))
        << "only " << pending.size() << " requests arrived";
  }
  EXPECT_EQ(server->open_connections(), static_cast<size_t>(kConnections));

  // The engine: one thread, round-robin over every open stream.
  std::thread engine([&] {
    for (auto& [id, res] : pending) res->begin_stream(200, {{"Content-Type", "text/event-stream"}});
    for (int k = 0; k < kChunks; ++k) {
      for (auto& [id, res] : pending) res->write("data: " + std::to_string(id) + "-" + std::to_string(k) + "\n\n");
    }
    for (auto& [id, res] : pending) res->end();
  });

  int complete = 0;
  for (int i = 0; i < kConnections; ++i) {
    auto r = clients[i]->read_response();
    ASSERT_TRUE(r) << "connection " << i;
    ASSERT_EQ(r->chunks.size(), static_cast<size_t>(kChunks)) << "connection " << i;
    for (int k = 0; k < kChunks; ++k) {
      ASSERT_EQ(r->chunks[k], "data: " + std::to_string(i) + "-" + std::to_string(k) + "\n\n");
    }
    ++complete;
  }
  engine.join();
  EXPECT_EQ(complete, kConnections);
  clients.clear();
  EXPECT_TRUE(testing::wait_until([&] { return server->open_connections() == 0; }, 5.0));
}

}  // namespace
}  // namespace db::http

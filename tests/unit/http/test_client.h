// A small blocking HTTP/1.1 client over POSIX sockets and a server fixture, for the
// http transport tests. Everything talks to 127.0.0.1.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "http/server.h"

namespace db::http::testing {

struct ClientResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;                                          // de-chunked
  std::vector<std::string> chunks;                           // chunk payloads, when chunked
  bool chunked = false;
  // First value of `lower_name`, or "" when absent.
  std::string header(std::string_view lower_name) const;
  bool has_header(std::string_view lower_name) const;
};

class Client {
 public:
  // Connects to 127.0.0.1:port; reads give up after `timeout_s`.
  explicit Client(int port, double timeout_s = 5.0, int rcvbuf_bytes = 0);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return fd_ >= 0; }
  void send(std::string_view bytes);
  // Best effort send that reports failure (the server may have closed).
  bool try_send(std::string_view bytes);
  // The next response (a 1xx interim response comes back on its own, without a body).
  // nullopt on EOF, error or timeout.
  std::optional<ClientResponse> read_response();
  // The head of a response, then one chunk per call of read_chunk().
  std::optional<ClientResponse> read_head();
  std::optional<std::string> read_chunk();  // "" = the last chunk
  // Appends the bytes that arrive next (those already received but not consumed first) to
  // *out; false on EOF, error or timeout.
  bool read_some(std::string* out);
  // Reads and discards until EOF (true) or timeout/reset (false).
  bool wait_closed(double timeout_s);
  // True when the server closed or reset the connection within timeout_s (data is discarded).
  bool wait_closed_or_reset(double timeout_s);
  void close();

 private:
  bool fill();  // reads more into buf_; false on EOF / error / timeout
  bool read_line(std::string* line);
  bool read_exact(size_t n, std::string* out);
  void set_timeout(double timeout_s);

  int fd_ = -1;
  double timeout_s_;
  std::string buf_;
};

// The error body used by the tests: {"error":{"code":N,"message":"..."}}.
std::string test_error_body(int status, const std::string& message);

// Options with short timeouts for tests, port 0.
ServerOptions test_options();

// Waits (polling) until pred() holds or `timeout_s` passes; returns pred().
template <class Pred>
bool wait_until(Pred pred, double timeout_s = 3.0) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > end) return pred();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A started server.
std::unique_ptr<Server> start_server(ServerOptions opts, Handler handler);

}  // namespace db::http::testing

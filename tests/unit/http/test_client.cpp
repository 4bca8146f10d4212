#include "test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace db::http::testing {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string ClientResponse::header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers) {
    if (k == lower_name) return v;
  }
  return "";
}

bool ClientResponse::has_header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers) {
    if (k == lower_name) return true;
  }
  return false;
}

Client::Client(int port, double timeout_s, int rcvbuf_bytes) : timeout_s_(timeout_s) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) return;
  if (rcvbuf_bytes > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf_bytes, sizeof rcvbuf_bytes);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  set_timeout(timeout_s);
}

Client::~Client() { close(); }

void Client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Client::set_timeout(double timeout_s) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_s);
  tv.tv_usec = static_cast<suseconds_t>((timeout_s - static_cast<double>(tv.tv_sec)) * 1e6);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

void Client::send(std::string_view bytes) { ASSERT_TRUE(try_send(bytes)) << "send failed: " << std::strerror(errno); }

bool Client::try_send(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool Client::fill() {
  char tmp[16384];
  for (;;) {
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
}

bool Client::read_line(std::string* line) {
  for (;;) {
    size_t eol = buf_.find("\r\n");
    if (eol != std::string::npos) {
      *line = buf_.substr(0, eol);
      buf_.erase(0, eol + 2);
      return true;
    }
    if (!fill()) return false;
  }
}

bool Client::read_exact(size_t n, std::string* out) {
  while (buf_.size() < n) {
    if (!fill()) return false;
  }
  out->append(buf_, 0, n);
  buf_.erase(0, n);
  return true;
}

std::optional<ClientResponse> Client::read_head() {
  std::string line;
  if (!read_line(&line)) return std::nullopt;
  ClientResponse r;
  if (line.rfind("HTTP/1.", 0) != 0 || line.size() < 12) return std::nullopt;
  r.status = std::atoi(line.c_str() + 9);
  for (;;) {
    if (!read_line(&line)) return std::nullopt;
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string::npos) return std::nullopt;
    r.headers.emplace_back(lower(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  r.chunked = lower(r.header("transfer-encoding")) == "chunked";
  return r;
}

std::optional<std::string> Client::read_chunk() {
  std::string line;
  if (!read_line(&line)) return std::nullopt;
  size_t size = std::stoul(line, nullptr, 16);
  std::string data;
  if (!read_exact(size, &data)) return std::nullopt;
  if (!read_line(&line) || !line.empty()) return std::nullopt;
  return data;
}

bool Client::read_some(std::string* out) {
  if (buf_.empty() && !fill()) return false;
  out->append(buf_);
  buf_.clear();
  return true;
}

std::optional<ClientResponse> Client::read_response() {
  auto r = read_head();
  if (!r) return std::nullopt;
  if (r->status < 200 || r->status == 204 || r->status == 304) return r;
  if (r->chunked) {
    for (;;) {
      auto chunk = read_chunk();
      if (!chunk) return std::nullopt;
      if (chunk->empty()) break;
      r->body += *chunk;
      r->chunks.push_back(std::move(*chunk));
    }
  } else if (r->has_header("content-length")) {
    if (!read_exact(std::stoul(r->header("content-length")), &r->body)) return std::nullopt;
  } else {
    while (fill()) {
    }
    r->body = std::move(buf_);
    buf_.clear();
  }
  return r;
}

bool Client::wait_closed(double timeout_s) {
  set_timeout(timeout_s);
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char tmp[16384];
  for (;;) {
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n == 0) return true;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (std::chrono::steady_clock::now() > end) return false;
  }
}

bool Client::wait_closed_or_reset(double timeout_s) {
  set_timeout(timeout_s);
  char tmp[16384];
  for (;;) {
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n == 0) return true;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == ECONNRESET || errno == EPIPE;
  }
}

std::string test_error_body(int status, const std::string& message) {
  std::string escaped;
  for (char c : message) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "{\"error\":{\"code\":" + std::to_string(status) + ",\"message\":\"" + escaped + "\"}}";
}

ServerOptions test_options() {
  ServerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.io_threads = 2;
  o.max_body_bytes = 1u << 20;
  o.max_header_bytes = 4096;
  o.header_timeout_s = 0.3;
  o.body_timeout_s = 0.3;
  o.idle_timeout_s = 0.3;
  o.write_timeout_s = 0.3;
  o.error_body = test_error_body;
  return o;
}

std::unique_ptr<Server> start_server(ServerOptions opts, Handler handler) {
  auto server = std::make_unique<Server>(std::move(opts), std::move(handler));
  server->start();
  return server;
}

}  // namespace db::http::testing

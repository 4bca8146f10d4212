// An event-driven HTTP/1.1 server: keep-alive, chunked request bodies and chunked
// (SSE) responses, thousands of connections on a few I/O threads. Protocol errors
// (malformed head, body or header too large, slow or idle clients) are answered
// here with ServerOptions::error_body; everything else goes to the Handler.
//
//   accept -> read head (header_timeout) -> read body (body_timeout) -> Handler(request, responder)
//          <- responder writes (any thread, queued)  <- keep-alive: next request (idle_timeout)
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "http/body_spool.h"
#include "http/request.h"
#include "http/responder.h"

namespace db::http {

// Called on an I/O thread for each complete request. Must not block: it answers at
// once or hands `responder` to other threads (which may answer later).
using Handler = std::function<void(Request&&, std::shared_ptr<Responder>)>;

// The body of a protocol-level error response (JSON in the server's error shape).
using ErrorBody = std::function<std::string(int status, const std::string& message)>;

struct ServerOptions {
  std::string host = "127.0.0.1";        // address to bind
  int port = 8000;                       // 0: any free port (see Server::port())
  int io_threads = 2;                    // threads running the event loop
  size_t max_body_bytes = 64u << 20;     // larger bodies get 413
  size_t max_header_bytes = 16u << 10;   // a larger head gets 431
  size_t max_connections = 16384;        // accepted sockets beyond this are closed at once
  double header_timeout_s = 10;          // a request head must arrive within this (slowloris guard): 408
  double body_timeout_s = 120;           // a body must arrive within this once the head did: 408
  double idle_timeout_s = 120;           // keep-alive connection with no request in flight is closed
  double write_timeout_s = 120;          // a client not reading its response for this long is dropped
  size_t max_body_bytes_in_flight = 0;   // bodies held at once, all connections (BodyBudget); 0 = no cap
  BodySpoolOptions spool;                // bodies written to disk instead of memory (none unless `wants` is set)
  ErrorBody error_body;                  // required
  // Called (on an I/O thread) with the status of each error the transport answers itself
  // (400, 408, 413, 417, 431, 503), which never reach the Handler; optional; must not block.
  std::function<void(int status)> on_protocol_error;
};

class Server {
 public:
  // Binds and listens (throws db::Error naming host:port when it cannot); serves nothing until start().
  Server(ServerOptions opts, Handler handler);
  ~Server();  // stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;          // the bound port
  void start();              // starts the I/O threads (returns at once)
  void stop_accepting();     // closes the listener; open connections keep being served
  void stop();               // closes every connection (their responders see client_gone) and joins the threads
  size_t open_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace db::http

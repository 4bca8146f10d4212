// The one response to one request. Thread-safe: any thread may call it (the engine's
// output thread does); every call only queues bytes for the connection's I/O thread
// and never blocks on the socket.
//
// A response is exactly one of
//   send(status, headers, body)                          -- Content-Length
//   begin_stream(status, headers) write(chunk)* end()    -- chunked transfer (SSE)
// Calls out of that order are ignored (and DB_CHECK in debug). Once the client is
// gone every call is a no-op. Keep-alive continues after the response ends.
#pragma once
#include <functional>
#include <string>

#include "http/request.h"

namespace db::http {

class Responder {
 public:
  virtual ~Responder() = default;
  // A complete response; adds Content-Length (and Connection when closing).
  virtual void send(int status, Headers headers, std::string body) = 0;
  // Starts a Transfer-Encoding: chunked response.
  virtual void begin_stream(int status, Headers headers) = 0;
  // One chunk of a streamed response (an empty chunk is ignored, never sent as the terminator).
  virtual void write(std::string chunk) = 0;
  // Ends a streamed response (the zero-length chunk).
  virtual void end() = 0;
  // True once the connection closed before the response ended.
  virtual bool client_gone() const = 0;
  // `fn` runs once, on an I/O thread, when the connection closes before the response
  // ended (client vanished, timeout, server shutdown); at once if that already
  // happened. It must not block. Setting it again replaces it.
  virtual void on_client_gone(std::function<void()> fn) = 0;
  // `fn` runs once, on an I/O thread, when every byte of this response queued so far
  // has gone to the socket (at once if none waits): a large body is written a piece at
  // a time, the next when the last has left, so it is never held whole. Never once the
  // client is gone (on_client_gone runs instead, and `fn` is dropped). Setting it again
  // replaces it. The default, for responders that hold nothing back, runs it at once.
  virtual void on_drained(std::function<void()> fn) {
    if (fn) fn();
  }
};

}  // namespace db::http

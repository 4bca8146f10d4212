// The Responder handed to handlers: turns calls into response bytes and posts them to its
// connection's strand. Holds the connection weakly, so it stays safe to call (as a no-op)
// after the connection is gone or the server destroyed.
#pragma once
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "http/responder.h"

namespace db::http {

class Connection;

// How the request being answered constrains the response.
struct ResponseMode {
  bool keep_alive = true;  // the connection stays open after this response
  bool http10 = false;     // the client speaks HTTP/1.0 (no chunked encoding)
  bool head = false;       // HEAD request: send the head only
};

class ResponderImpl : public Responder, public std::enable_shared_from_this<ResponderImpl> {
 public:
  ResponderImpl(std::weak_ptr<Connection> conn, ResponseMode mode);

  void send(int status, Headers headers, std::string body) override;
  void begin_stream(int status, Headers headers) override;
  void write(std::string chunk) override;
  void end() override;
  bool client_gone() const override;
  void on_client_gone(std::function<void()> fn) override;
  void on_drained(std::function<void()> fn) override;

  // Called by the connection (on its strand) when it closes. Runs the callback, once,
  // unless the response had already ended.
  void mark_gone();
  // True once send() or begin_stream() was called.
  bool started() const;

 private:
  enum class Phase { fresh, streaming, ended };
  // Posts bytes to the connection; requires mu_.
  void post_locked(std::string bytes, bool final, bool close_after);
  void out_of_order(const char* call) const;

  mutable std::mutex mu_;
  Phase phase_ = Phase::fresh;
  bool gone_ = false;
  std::function<void()> on_gone_;
  std::weak_ptr<Connection> conn_;
  ResponseMode mode_;
};

}  // namespace db::http

#include "http/connection.h"

#include <boost/asio/post.hpp>
#include <exception>

#include "http/responder_impl.h"
#include "http/response_format.h"
#include "http/server_context.h"

namespace db::http {
namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// Pipelined bytes buffered while a response is in progress before reading pauses.
constexpr size_t kMaxBufferedWhileHandling = 1u << 20;

std::string endpoint_text(const asio::ip::tcp::socket& socket) {
  error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) return "?";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, std::shared_ptr<ServerContext> ctx)
    : socket_(std::move(socket)),
      ctx_(std::move(ctx)),
      remote_(endpoint_text(socket_)),
      read_deadline_(socket_.get_executor()),
      write_deadline_(socket_.get_executor()),
      reader_(ctx_->opts.max_header_bytes, ctx_->opts.max_body_bytes, ctx_->body_budget, ctx_->body_spool) {}

Connection::~Connection() { ctx_->remove(this); }

void Connection::post_start() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->start(); });
}

void Connection::post_close() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->close(); });
}

void Connection::start() {
  error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  head_deadline_armed_ = true;
  arm_read_deadline(ctx_->opts.header_timeout_s);
  maybe_read();
}

void Connection::maybe_read() {
  if (reading_ || closed_ || peer_eof_) return;
  if (state_ == State::handling && inbuf_.size() >= kMaxBufferedWhileHandling) return;
  reading_ = true;
  socket_.async_read_some(asio::buffer(rx_), [self = shared_from_this()](const error_code& ec, size_t n) {
    self->on_read(ec, n);
  });
}

void Connection::on_read(const error_code& ec, size_t n) {
  reading_ = false;
  if (closed_) return;
  if (ec) return on_peer_eof();
  switch (state_) {
    case State::linger:
    case State::closing:
      break;  // input after the last response is discarded
    case State::handling:
      inbuf_.append(rx_.data(), n);  // a pipelined request; parsed once the response ends
      break;
    case State::read_head:
    case State::read_body:
      if (!head_deadline_armed_) {  // first byte of a request on an idle keep-alive connection
        head_deadline_armed_ = true;
        arm_read_deadline(ctx_->opts.header_timeout_s);
      }
      inbuf_.append(rx_.data(), n);
      process_input();
      break;
  }
  maybe_read();
}

// The peer closed its sending side or the connection broke. While a response is in
// progress this means the client is gone; otherwise the connection ends once any
// queued bytes are written.
void Connection::on_peer_eof() {
  peer_eof_ = true;
  if (state_ == State::handling || state_ == State::linger || state_ == State::read_body) return close();
  if (state_ == State::read_head && reader_.started()) return close();
  if (!writing_ && outq_.empty()) return close();
  state_ = State::closing;  // flush what is queued, then close
}

void Connection::process_input() {
  RequestReader::Outcome outcome = reader_.feed(inbuf_);
  if (reader_.take_continue_request()) queue(std::string(kContinue));
  if (outcome.status == RequestReader::Status::error) return fail(outcome.http_status, outcome.message);
  if (outcome.status == RequestReader::Status::done) return dispatch();
  if (state_ == State::read_head && reader_.header_done()) {
    state_ = State::read_body;
    arm_read_deadline(ctx_->opts.body_timeout_s);
  }
}

void Connection::dispatch() {
  read_deadline_.cancel();
  state_ = State::handling;
  ResponseMode mode;
  mode.keep_alive = reader_.keep_alive();
  mode.http10 = reader_.http10();
  keep_alive_ = mode.keep_alive;
  Request req = reader_.take(remote_);
  mode.head = req.method == "HEAD";
  responder_ = std::make_shared<ResponderImpl>(weak_from_this(), mode);
  std::shared_ptr<ResponderImpl> responder = responder_;
  std::string failure;
  try {
    ctx_->handler(std::move(req), responder);
    return;
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "unknown exception";
  }
  if (responder->started()) return;
  std::string body;
  try {
    body = ctx_->opts.error_body(500, "request handler failed: " + failure);
  } catch (...) {
    body = "{}";
  }
  responder->send(500, {{"Content-Type", "application/json"}}, std::move(body));
}

// The response ended: go on with the next (possibly already buffered) request.
void Connection::next_request() {
  state_ = State::read_head;
  if (inbuf_.empty()) {
    head_deadline_armed_ = false;
    arm_read_deadline(ctx_->opts.idle_timeout_s);
  } else {
    head_deadline_armed_ = true;
    arm_read_deadline(ctx_->opts.header_timeout_s);
    process_input();
  }
  maybe_read();
}

void Connection::arm_read_deadline(double seconds) {
  read_deadline_.arm(seconds, [self = shared_from_this()] { self->on_read_deadline(); });
}

void Connection::on_read_deadline() {
  if (closed_) return;
  switch (state_) {
    case State::read_head:
      if (!reader_.started() && inbuf_.empty()) {  // idle: nothing was asked
        // A long response still being written is not idleness (write_timeout guards it).
        if (writing_ || !outq_.empty()) return arm_read_deadline(ctx_->opts.idle_timeout_s);
        return close();
      }
      return fail(408, "request head not received within " + std::to_string(ctx_->opts.header_timeout_s) + " s");
    case State::read_body:
      return fail(408, "request body not received within " + std::to_string(ctx_->opts.body_timeout_s) + " s");
    case State::linger:
      return close();
    case State::handling:
    case State::closing:
      return;
  }
}

// Answers a protocol error and closes the connection once the answer is written.
void Connection::fail(int status, const std::string& message) {
  read_deadline_.cancel();
  inbuf_.clear();
  state_ = State::closing;
  if (ctx_->opts.on_protocol_error) {
    try {
      ctx_->opts.on_protocol_error(status);
    } catch (...) {  // a metrics hook must not take the connection down
    }
  }
  std::string body;
  try {
    body = ctx_->opts.error_body(status, message);
  } catch (const std::exception&) {
    body = "{}";
  }
  queue(format_error_response(status, body));
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  read_deadline_.cancel();
  write_deadline_.cancel();
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  if (!writing_) outq_.clear();  // a pending write still refers to its buffers until it completes
  inbuf_.clear();
  on_drained_ = nullptr;
  ctx_->remove(this);
  if (auto responder = std::move(responder_)) responder->mark_gone();
}

}  // namespace db::http

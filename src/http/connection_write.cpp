// The write side of a Connection: an ordered queue of byte strings written with
// gathered writes, a progress-based write timeout, and the closing sequence.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>

#include "http/connection.h"
#include "http/responder_impl.h"
#include "http/server_context.h"

namespace db::http {
namespace asio = boost::asio;
using boost::system::error_code;

namespace {
constexpr size_t kMaxGatherBuffers = 64;
constexpr size_t kMaxGatherBytes = 1u << 20;
// How long input is drained after the sending side was shut down.
constexpr double kLingerSeconds = 1.0;
}  // namespace

void Connection::post_response_bytes(std::shared_ptr<ResponderImpl> who, std::string bytes, bool final,
                                     bool close_after) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), who = std::move(who), bytes = std::move(bytes),
                                      final, close_after]() mutable {
    self->response_bytes(who, std::move(bytes), final, close_after);
  });
}

void Connection::response_bytes(const std::shared_ptr<ResponderImpl>& who, std::string bytes, bool final,
                                 bool close_after) {
  if (closed_ || who != responder_ || state_ != State::handling) return;
  if (!bytes.empty()) queue(std::move(bytes));
  if (!final) return;
  responder_.reset();
  on_drained_ = nullptr;  // a finished response waits for nothing
  if (close_after || !keep_alive_) {
    state_ = State::closing;
    inbuf_.clear();
    if (!writing_ && outq_.empty()) on_output_drained();
    return;
  }
  next_request();
}

void Connection::post_on_drained(std::shared_ptr<ResponderImpl> who, std::function<void()> fn) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), who = std::move(who), fn = std::move(fn)]() mutable {
    if (self->closed_ || who != self->responder_ || self->state_ != State::handling) return;
    if (!self->writing_ && self->outq_.empty()) {
      if (fn) fn();
      return;
    }
    self->on_drained_ = std::move(fn);
  });
}

void Connection::queue(std::string bytes) {
  if (closed_) return;
  outq_.push_back(std::move(bytes));
  start_write();
}

void Connection::start_write() {
  if (writing_ || closed_ || outq_.empty()) return;
  write_bufs_.clear();
  size_t total = 0;
  for (size_t i = 0; i < outq_.size() && write_bufs_.size() < kMaxGatherBuffers && total < kMaxGatherBytes; ++i) {
    const std::string& s = outq_[i];
    const size_t skip = i == 0 ? out_offset_ : 0;
    write_bufs_.emplace_back(s.data() + skip, s.size() - skip);
    total += s.size() - skip;
  }
  writing_ = true;
  write_deadline_.arm(ctx_->opts.write_timeout_s, [self = shared_from_this()] { self->close(); });
  socket_.async_write_some(write_bufs_, [self = shared_from_this()](const error_code& ec, size_t n) {
    self->on_write(ec, n);
  });
}

void Connection::on_write(const error_code& ec, size_t n) {
  writing_ = false;
  if (closed_) {
    outq_.clear();
    return;
  }
  if (ec) return close();
  while (n > 0 && !outq_.empty()) {
    const size_t left = outq_.front().size() - out_offset_;
    if (n < left) {
      out_offset_ += n;
      break;
    }
    n -= left;
    out_offset_ = 0;
    outq_.pop_front();
  }
  if (!outq_.empty()) return start_write();
  write_deadline_.cancel();
  if (on_drained_) std::exchange(on_drained_, nullptr)();
  on_output_drained();
}

// Everything queued is written. When the connection is to end, shut down the sending side.
void Connection::on_output_drained() {
  if (state_ != State::closing) return;
  if (peer_eof_) return close();
  begin_linger();
}

// Shuts down the sending side (the peer reads EOF after our last byte) and drains input
// until the peer closes too, so that its unread request bytes don't turn into a reset.
void Connection::begin_linger() {
  state_ = State::linger;
  error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  inbuf_.clear();
  read_deadline_.arm(kLingerSeconds,
                     [self = shared_from_this()] { self->on_read_deadline(); });
  maybe_read();
}

}  // namespace db::http

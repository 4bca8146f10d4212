#include "http/responder_impl.h"

#include "http/connection.h"
#include "http/response_format.h"
#include "util/error.h"

namespace db::http {

ResponderImpl::ResponderImpl(std::weak_ptr<Connection> conn, ResponseMode mode)
    : conn_(std::move(conn)), mode_(mode) {}

void ResponderImpl::out_of_order(const char* call) const {
#ifndef NDEBUG
  DB_CHECK(false, std::string("Responder::") + call + " called out of order");
#else
  (void)call;
#endif
}

void ResponderImpl::post_locked(std::string bytes, bool final, bool close_after) {
  if (auto conn = conn_.lock()) conn->post_response_bytes(shared_from_this(), std::move(bytes), final, close_after);
}

void ResponderImpl::send(int status, Headers headers, std::string body) {
  std::lock_guard lock(mu_);
  if (gone_) return;
  if (phase_ != Phase::fresh) return out_of_order("send");
  phase_ = Phase::ended;
  const bool close = !mode_.keep_alive;
  std::string bytes = format_head(status, headers, BodyFraming::content_length, body.size(), close,
                                  mode_.http10 && mode_.keep_alive);
  if (!mode_.head) bytes += body;
  post_locked(std::move(bytes), /*final=*/true, close);
}

void ResponderImpl::begin_stream(int status, Headers headers) {
  std::lock_guard lock(mu_);
  if (gone_) return;
  if (phase_ != Phase::fresh) return out_of_order("begin_stream");
  phase_ = Phase::streaming;
  // HTTP/1.0 has no chunked encoding: the body runs until the connection closes.
  const BodyFraming framing = mode_.http10 ? BodyFraming::until_close : BodyFraming::chunked;
  post_locked(format_head(status, headers, framing, 0, !mode_.keep_alive || mode_.http10), false, false);
}

void ResponderImpl::write(std::string chunk) {
  std::lock_guard lock(mu_);
  if (gone_) return;
  if (phase_ != Phase::streaming) return out_of_order("write");
  if (chunk.empty() || mode_.head) return;
  post_locked(mode_.http10 ? std::move(chunk) : frame_chunk(chunk), false, false);
}

void ResponderImpl::end() {
  std::lock_guard lock(mu_);
  if (gone_) return;
  if (phase_ != Phase::streaming) return out_of_order("end");
  phase_ = Phase::ended;
  const bool close = !mode_.keep_alive || mode_.http10;
  post_locked(mode_.http10 || mode_.head ? std::string() : std::string(kLastChunk), true, close);
}

bool ResponderImpl::client_gone() const {
  std::lock_guard lock(mu_);
  return gone_;
}

bool ResponderImpl::started() const {
  std::lock_guard lock(mu_);
  return phase_ != Phase::fresh;
}

void ResponderImpl::on_client_gone(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  if (!gone_) {
    on_gone_ = std::move(fn);
    return;
  }
  lock.unlock();
  if (fn) fn();
}

void ResponderImpl::on_drained(std::function<void()> fn) {
  if (auto conn = conn_.lock()) conn->post_on_drained(shared_from_this(), std::move(fn));
}

void ResponderImpl::mark_gone() {
  std::function<void()> fn;
  {
    std::lock_guard lock(mu_);
    if (gone_ || phase_ == Phase::ended) return;
    gone_ = true;
    fn = std::move(on_gone_);
    on_gone_ = nullptr;
  }
  if (fn) fn();
}

}  // namespace db::http

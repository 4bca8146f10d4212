// A re-armable one-shot timeout bound to a connection's strand. Arming again or
// cancelling makes any earlier expiry a no-op, even one already queued to run.
// Not thread-safe: use it only from the owning strand.
#pragma once
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <utility>

namespace db::http {

class Deadline {
 public:
  explicit Deadline(const boost::asio::any_io_executor& executor) : timer_(executor) {}

  // Runs `on_expire` after `seconds` unless re-armed or cancelled first. `on_expire` must keep
  // the owner of this Deadline alive (capture its shared_ptr).
  template <class Fn>
  void arm(double seconds, Fn on_expire) {
    const uint64_t generation = ++generation_;
    timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds > 0 ? seconds : 0)));
    timer_.async_wait([this, generation, fn = std::move(on_expire)](const boost::system::error_code& ec) mutable {
      if (ec || generation != generation_) return;
      fn();
    });
  }

  void cancel() {
    ++generation_;
    timer_.cancel();
  }

 private:
  boost::asio::steady_timer timer_;
  uint64_t generation_ = 0;
};

}  // namespace db::http

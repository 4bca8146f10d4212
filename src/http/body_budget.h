// A server-wide cap on the bytes of request bodies held at once: received by the
// transport, queued for a handler, or being parsed by one. A connection reserves a
// body's bytes before it reads them (its Content-Length, or chunk by chunk); a request
// that does not fit is refused with 503 instead of growing the process's memory.
// The reservation travels with the Request (Request::body_lease) and is returned when
// the last holder drops it, e.g. once a handler has parsed the body.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>

namespace db::http {

class BodyBudget {
 public:
  // `capacity` bytes may be held at once; 0 means no cap.
  explicit BodyBudget(size_t capacity) : capacity_(capacity) {}
  size_t capacity() const { return capacity_; }
  size_t held() const { return held_.load(); }
  // Takes `bytes` when they fit under the capacity; false (taking nothing) otherwise.
  bool try_take(size_t bytes);
  void give_back(size_t bytes);

 private:
  const size_t capacity_;
  std::atomic<size_t> held_{0};
};

// Bytes held from a BodyBudget; returned when the lease is reset or destroyed.
class BodyLease {
 public:
  BodyLease() = default;
  explicit BodyLease(std::shared_ptr<BodyBudget> budget) : budget_(std::move(budget)) {}
  BodyLease(BodyLease&& other) noexcept;
  BodyLease& operator=(BodyLease&& other) noexcept;
  BodyLease(const BodyLease&) = delete;
  BodyLease& operator=(const BodyLease&) = delete;
  ~BodyLease() { reset(); }

  // Grows the lease to at least `bytes`; false when the budget cannot give the difference
  // (the lease keeps what it had).
  bool grow_to(size_t bytes);
  size_t bytes() const { return bytes_; }
  // Returns every byte to the budget; the lease stays bound to it, holding nothing.
  void reset();

 private:
  std::shared_ptr<BodyBudget> budget_;
  size_t bytes_ = 0;
};

}  // namespace db::http

#include "http/body_budget.h"

#include <utility>

namespace db::http {

bool BodyBudget::try_take(size_t bytes) {
  if (capacity_ == 0) {
    held_.fetch_add(bytes);
    return true;
  }
  size_t now = held_.load();
  do {
    if (bytes > capacity_ || now > capacity_ - bytes) return false;
  } while (!held_.compare_exchange_weak(now, now + bytes));
  return true;
}

void BodyBudget::give_back(size_t bytes) { held_.fetch_sub(bytes); }

BodyLease::BodyLease(BodyLease&& other) noexcept
    : budget_(std::move(other.budget_)), bytes_(std::exchange(other.bytes_, 0)) {}

BodyLease& BodyLease::operator=(BodyLease&& other) noexcept {
  if (this != &other) {
    reset();
    budget_ = std::move(other.budget_);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

bool BodyLease::grow_to(size_t bytes) {
  if (bytes <= bytes_) return true;
  if (!budget_) return true;  // unbound: nothing to account against
  if (!budget_->try_take(bytes - bytes_)) return false;
  bytes_ = bytes;
  return true;
}

void BodyLease::reset() {
  if (budget_ && bytes_ > 0) budget_->give_back(bytes_);
  bytes_ = 0;
}

}  // namespace db::http

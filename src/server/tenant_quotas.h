// Per-tenant quotas of `deepbatch serve` (limits from tenant_registry.h):
//   - concurrent generation requests: a slot taken at admission, given back once the
//     request is answered;
//   - tokens per minute: prompt tokens charged at admission, generated tokens as each
//     part of a request finishes, over a sliding 60 s window; a request is refused
//     while the window is already at or over the limit (so one request may overshoot
//     it, and the tenant then waits until enough of the window has expired);
//   - requests in the tenant's unfinished batches, checked when a batch is created.
// Refusals throw QuotaExceeded (429 + Retry-After). Thread-safe; each tenant has a
// lock of its own, so a tenant hammering its quota never waits on, or slows, another.
// Tenants not in the registry (and the default tenant "") have no limits.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "server/tenant_registry.h"

namespace db::server {

class TenantQuotas {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kTokenWindow{60};
  static constexpr int kConcurrencyRetryAfterS = 1;  // a slot frees as soon as any request of the tenant ends
  static constexpr int kBatchQueueRetryAfterS = 30;  // batches drain slowly

  struct State;

  // One admitted request's concurrency slot; given back by release() or on destruction.
  class Slot {
   public:
    Slot() = default;
    explicit Slot(State* state) : state_(state) {}
    Slot(Slot&& other) noexcept : state_(other.state_) { other.state_ = nullptr; }
    Slot& operator=(Slot&& other) noexcept;
    ~Slot() { release(); }
    void release();  // idempotent

   private:
    State* state_ = nullptr;  // null: nothing held (no limits, or released)
  };

  explicit TenantQuotas(const TenantRegistry& tenants);
  ~TenantQuotas();
  TenantQuotas(const TenantQuotas&) = delete;
  TenantQuotas& operator=(const TenantQuotas&) = delete;

  // Admits one generation request of `tenant` at `now`, or throws QuotaExceeded when
  // its slots are all taken (Retry-After kConcurrencyRetryAfterS) or its token window
  // is at or over the limit (Retry-After: seconds until enough of it has expired).
  Slot admit(std::string_view tenant, Clock::time_point now = Clock::now());
  // Adds `tokens` to the tenant's window at `now`.
  void charge(std::string_view tenant, int64_t tokens, Clock::time_point now = Clock::now());
  // Throws QuotaExceeded when `queued` requests in the tenant's unfinished batches plus
  // `adding` would pass its limit; api::ApiError 400 when `adding` alone does (a
  // retry cannot help).
  void check_batch_queue(std::string_view tenant, int64_t queued, int64_t adding) const;

  // Tokens charged to the tenant within the window ending at `now`.
  int64_t tokens_in_window(std::string_view tenant, Clock::time_point now = Clock::now()) const;
  // Its requests holding a slot.
  int64_t in_flight(std::string_view tenant) const;

 private:
  State* state(std::string_view tenant) const;
  std::map<std::string, std::unique_ptr<State>, std::less<>> states_;  // fixed after construction: lock-free lookups
};

}  // namespace db::server

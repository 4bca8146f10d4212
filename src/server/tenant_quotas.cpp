#include "server/tenant_quotas.h"

#include <deque>
#include <mutex>
#include <utility>

#include "server/quota_error.h"

namespace db::server {

namespace {

// Charges closer together than this share one window entry, which bounds a window
// to 60 s / kMergeWithin entries however fast a tenant sends.
constexpr auto kMergeWithin = std::chrono::milliseconds(250);

int ceil_seconds(TenantQuotas::Clock::duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  return static_cast<int>(std::max<int64_t>(1, (ms + 999) / 1000));
}

}  // namespace

struct TenantQuotas::State {
  std::string name;
  TenantLimits limits;
  mutable std::mutex mu;  // guards what follows
  int64_t in_flight = 0;
  std::deque<std::pair<Clock::time_point, int64_t>> window;  // (charged at, tokens), oldest first
  int64_t window_tokens = 0;                                 // sum over `window`

  // Drops the entries that left the window ending at `now`. Needs `mu`.
  void expire(Clock::time_point now) {
    while (!window.empty() && window.front().first <= now - kTokenWindow) {
      window_tokens -= window.front().second;
      window.pop_front();
    }
  }
  // Seconds until the window holds less than the limit, when only expiry changes it. Needs `mu`.
  int seconds_until_under_limit(Clock::time_point now) const {
    int64_t left = window_tokens;
    for (const auto& [at, tokens] : window) {
      left -= tokens;
      if (left < limits.max_tokens_per_minute) return ceil_seconds(at + kTokenWindow - now);
    }
    return 1;
  }
};

TenantQuotas::Slot& TenantQuotas::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    release();
    state_ = std::exchange(other.state_, nullptr);
  }
  return *this;
}

void TenantQuotas::Slot::release() {
  State* s = std::exchange(state_, nullptr);
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  --s->in_flight;
}

TenantQuotas::TenantQuotas(const TenantRegistry& tenants) {
  for (const Tenant& t : tenants.tenants()) {
    auto s = std::make_unique<State>();
    s->name = t.name;
    s->limits = t.limits;
    states_.emplace(t.name, std::move(s));
  }
}

TenantQuotas::~TenantQuotas() = default;

TenantQuotas::State* TenantQuotas::state(std::string_view tenant) const {
  const auto it = states_.find(tenant);
  return it == states_.end() ? nullptr : it->second.get();
}

TenantQuotas::Slot TenantQuotas::admit(std::string_view tenant, Clock::time_point now) {
  State* s = state(tenant);
  if (!s) return Slot();
  std::lock_guard<std::mutex> lock(s->mu);
  const TenantLimits& l = s->limits;
  if (l.max_concurrent_requests > 0 && s->in_flight >= l.max_concurrent_requests)
    throw QuotaExceeded("tenant '" + s->name + "' has " + std::to_string(s->in_flight) +
                            " requests in flight, its limit (max_concurrent_requests); retry when one has finished",
                        kConcurrencyRetryAfterS);
  if (l.max_tokens_per_minute > 0) {
    s->expire(now);
    if (s->window_tokens >= l.max_tokens_per_minute)
      throw QuotaExceeded("tenant '" + s->name + "' used " + std::to_string(s->window_tokens) +
                              " tokens in the last minute, its limit is " + std::to_string(l.max_tokens_per_minute) +
                              " (max_tokens_per_minute); retry later",
                          s->seconds_until_under_limit(now));
  }
  ++s->in_flight;
  return Slot(s);
}

void TenantQuotas::charge(std::string_view tenant, int64_t tokens, Clock::time_point now) {
  State* s = state(tenant);
  if (!s || tokens <= 0 || s->limits.max_tokens_per_minute <= 0) return;
  std::lock_guard<std::mutex> lock(s->mu);
  s->expire(now);
  if (!s->window.empty() && now - s->window.back().first < kMergeWithin)
    s->window.back().second += tokens;
  else
    s->window.emplace_back(now, tokens);
  s->window_tokens += tokens;
}

void TenantQuotas::check_batch_queue(std::string_view tenant, int64_t queued, int64_t adding) const {
  const State* s = state(tenant);
  if (!s) return;
  const int64_t limit = s->limits.max_queued_batch_requests;  // fixed: no lock needed
  if (limit <= 0) return;
  if (adding > limit)
    throw api::ApiError("the batch has " + std::to_string(adding) + " requests, more than tenant '" + s->name +
                            "' may have queued at all (max_queued_batch_requests " + std::to_string(limit) +
                            "); split it",
                        "input_file_id", "batch_too_large");
  if (queued + adding > limit)
    throw QuotaExceeded("tenant '" + s->name + "' has " + std::to_string(queued) +
                            " requests in unfinished batches; this batch adds " + std::to_string(adding) +
                            ", past its limit of " + std::to_string(limit) +
                            " (max_queued_batch_requests); retry when earlier batches have progressed",
                        kBatchQueueRetryAfterS);
}

int64_t TenantQuotas::tokens_in_window(std::string_view tenant, Clock::time_point now) const {
  State* s = state(tenant);
  if (!s) return 0;
  std::lock_guard<std::mutex> lock(s->mu);
  s->expire(now);
  return s->window_tokens;
}

int64_t TenantQuotas::in_flight(std::string_view tenant) const {
  const State* s = state(tenant);
  if (!s) return 0;
  std::lock_guard<std::mutex> lock(s->mu);
  return s->in_flight;
}

}  // namespace db::server

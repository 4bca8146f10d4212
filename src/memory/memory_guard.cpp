#include "memory/memory_guard.h"

#include <algorithm>
#include <cstdio>

namespace db {

namespace {

constexpr double kBackoffFactor = 0.7;

// The largest power of two <= v, and at least 1.
int32_t pow2_floor(int32_t v) {
  int32_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

int64_t mib(int64_t bytes) { return bytes / (1024 * 1024); }

}  // namespace

const char* memory_guard_state_name(MemoryGuardState s) {
  switch (s) {
    case MemoryGuardState::Normal: return "normal";
    case MemoryGuardState::Shrinking: return "shrinking";
    case MemoryGuardState::Recovering: return "recovering";
  }
  return "";
}

MemoryGuard::MemoryGuard(MemoryGuardConfig cfg, int32_t max_running)
    : cfg_(cfg), max_running_(std::max<int32_t>(1, max_running)) {
  decision_.max_running = max_running_;
  snap_.enabled = cfg_.enabled;
  snap_.max_running = max_running_;
}

bool MemoryGuard::due(double time_s) const {
  return !any_reading_ || time_s - last_reading_s_ >= cfg_.poll_interval_s;
}

MemoryGuardDecision MemoryGuard::observe(const MemoryReading& r) {
  last_reading_s_ = r.time_s;
  any_reading_ = true;
  const int64_t limit = cfg_.limit_bytes > 0 ? cfg_.limit_bytes : r.limit_bytes.value_or(0);
  snap_.usage_bytes = r.usage_bytes;
  snap_.limit_bytes = limit;
  snap_.rss_bytes = r.rss_bytes;
  if (!cfg_.enabled) return decision_;

  // No limit reads as no pressure: the guard recovers (or stays Normal).
  const double ratio = limit > 0 ? static_cast<double>(r.usage_bytes) / static_cast<double>(limit) : 0.0;
  const bool interval_passed = !any_backoff_ || r.time_s - last_backoff_s_ >= cfg_.backoff_interval_s;
  switch (snap_.state) {
    case MemoryGuardState::Normal:
    case MemoryGuardState::Recovering:
      if (ratio >= cfg_.high_water) {
        if (interval_passed) {
          back_off(r, limit);
        } else {  // backed off moments ago: stop admitting and growing, cut when the interval is up
          decision_.admission_paused = decision_.kv_growth_frozen = true;
          enter(MemoryGuardState::Shrinking, r, limit);
        }
      } else if (snap_.state == MemoryGuardState::Recovering) {
        const int32_t step = std::max<int32_t>(1, max_running_ / 16);
        decision_.max_running = std::min(max_running_, decision_.max_running + step);
        if (decision_.max_running == max_running_) {
          ++snap_.recoveries;
          enter(MemoryGuardState::Normal, r, limit);
        }
      }
      break;
    case MemoryGuardState::Shrinking:
      if (ratio < cfg_.low_water) {
        decision_.admission_paused = decision_.kv_growth_frozen = false;
        enter(MemoryGuardState::Recovering, r, limit);
      } else if (ratio >= cfg_.high_water && interval_passed && decision_.max_running > 1 &&
                 r.usage_bytes > usage_at_backoff_ + static_cast<int64_t>(cfg_.growth_margin * limit)) {
        back_off(r, limit);
      } else if (decision_.admission_paused && interval_passed) {
        decision_.admission_paused = false;
        event("admission reopened", r, limit);
      }
      break;
  }
  decision_.kv_growth_bytes =
      limit <= 0 ? -1
      : decision_.kv_growth_frozen
          ? 0
          : std::max<int64_t>(0, static_cast<int64_t>(cfg_.high_water * static_cast<double>(limit)) - r.usage_bytes);
  snap_.max_running = decision_.max_running;
  snap_.admission_paused = decision_.admission_paused;
  snap_.kv_growth_frozen = decision_.kv_growth_frozen;
  return decision_;
}

void MemoryGuard::back_off(const MemoryReading& r, int64_t limit) {
  const int32_t before = decision_.max_running;
  decision_.max_running = pow2_floor(static_cast<int32_t>(before * kBackoffFactor));
  decision_.admission_paused = decision_.kv_growth_frozen = true;
  last_backoff_s_ = r.time_s;
  any_backoff_ = true;
  usage_at_backoff_ = r.usage_bytes;
  ++snap_.backoffs;
  snap_.state = MemoryGuardState::Shrinking;
  event("back-off, max running " + std::to_string(before) + " -> " + std::to_string(decision_.max_running) +
            ", admission paused, KV growth frozen",
        r, limit);
}

void MemoryGuard::enter(MemoryGuardState s, const MemoryReading& r, int64_t limit) {
  snap_.state = s;
  std::string what = memory_guard_state_name(s);
  if (s == MemoryGuardState::Normal) what += ", max running back at " + std::to_string(max_running_);
  if (s == MemoryGuardState::Recovering) what += ", admission open, KV growth allowed";
  if (s == MemoryGuardState::Shrinking) what += ", admission paused, KV growth frozen";
  event(what, r, limit);
}

void MemoryGuard::event(const std::string& what, const MemoryReading& r, int64_t limit) {
  char usage[96];
  std::snprintf(usage, sizeof usage, "usage %lld MiB of %lld MiB (%.1f%%), rss %lld MiB", (long long)mib(r.usage_bytes),
                (long long)mib(limit), limit > 0 ? 100.0 * static_cast<double>(r.usage_bytes) / limit : 0.0,
                (long long)mib(r.rss_bytes));
  events_.push_back(what + ": " + usage + ", cap " + std::to_string(decision_.max_running));
}

std::vector<std::string> MemoryGuard::take_events() {
  std::vector<std::string> out;
  out.swap(events_);
  return out;
}

}  // namespace db

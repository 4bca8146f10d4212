// Per-tenant quotas with an injected clock: concurrency slots, the sliding token
// window and its Retry-After, the batch queue, and tenants that never affect each other.
#include "server/tenant_quotas.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "server/quota_error.h"

namespace db::server {
namespace {

using Clock = TenantQuotas::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

TenantRegistry registry() {
  Tenant a;
  a.name = "a";
  a.key = "sk-a";
  a.limits.max_concurrent_requests = 2;
  a.limits.max_tokens_per_minute = 1000;
  a.limits.max_queued_batch_requests = 10;
  Tenant b;
  b.name = "b";
  b.key = "sk-b";
  return TenantRegistry({a, b});
}

// The Retry-After of the QuotaExceeded that fn() throws; -1 when it throws none.
template <class Fn>
int retry_after(Fn fn) {
  try {
    fn();
  } catch (const QuotaExceeded& e) {
    EXPECT_EQ(e.status(), 429);
    EXPECT_EQ(e.code(), "rate_limit_exceeded");
    return e.retry_after_s();
  }
  return -1;
}

TEST(TenantQuotas, ConcurrencyIsLimitedUntilASlotIsGivenBack) {
  const TenantRegistry reg = registry();
  TenantQuotas q(reg);
  const Clock::time_point t0 = Clock::now();
  TenantQuotas::Slot first = q.admit("a", t0);
  {
    TenantQuotas::Slot second = q.admit("a", t0);
    EXPECT_EQ(q.in_flight("a"), 2);
    EXPECT_EQ(retry_after([&] { q.admit("a", t0); }), TenantQuotas::kConcurrencyRetryAfterS);
  }  // destroyed: given back
  EXPECT_EQ(q.in_flight("a"), 1);
  TenantQuotas::Slot third = q.admit("a", t0);
  first.release();
  first.release();  // idempotent
  EXPECT_EQ(q.in_flight("a"), 1);
  TenantQuotas::Slot moved = std::move(third);
  EXPECT_EQ(q.in_flight("a"), 1);
}

TEST(TenantQuotas, TokenWindowRefusesAtTheLimitUntilEnoughExpires) {
  const TenantRegistry reg = registry();
  TenantQuotas q(reg);
  const Clock::time_point t0 = Clock::now();
  q.charge("a", 600, t0);
  q.admit("a", t0 + seconds(10)).release();  // 600 < 1000
  q.charge("a", 500, t0 + seconds(20));      // 1100: over
  EXPECT_EQ(q.tokens_in_window("a", t0 + seconds(20)), 1100);
  // Under the limit again once the 600 charged at t0 leave the window (t0 + 60 s): 40 s from t0 + 20 s.
  EXPECT_EQ(retry_after([&] { q.admit("a", t0 + seconds(20)); }), 40);
  EXPECT_EQ(retry_after([&] { q.admit("a", t0 + milliseconds(59500)); }), 1);  // rounded up
  q.admit("a", t0 + seconds(60)).release();  // 500 left
  EXPECT_EQ(q.tokens_in_window("a", t0 + seconds(60)), 500);
  EXPECT_EQ(q.tokens_in_window("a", t0 + seconds(80)), 0);
}

TEST(TenantQuotas, ExactlyAtTheLimitIsRefusedAndRetryAfterCountsOnlyWhatMustExpire) {
  const TenantRegistry reg = registry();
  TenantQuotas q(reg);
  const Clock::time_point t0 = Clock::now();
  q.charge("a", 10, t0);
  q.charge("a", 990, t0 + seconds(30));  // exactly 1000
  // The 10 tokens at t0 expiring leaves 990 < 1000: 30 s from t0 + 30 s.
  EXPECT_EQ(retry_after([&] { q.admit("a", t0 + seconds(30)); }), 30);
}

TEST(TenantQuotas, BatchQueueCountsQueuedAndNewRequests) {
  const TenantRegistry reg = registry();
  TenantQuotas q(reg);
  q.check_batch_queue("a", 0, 10);
  q.check_batch_queue("a", 4, 6);
  EXPECT_EQ(retry_after([&] { q.check_batch_queue("a", 5, 6); }), TenantQuotas::kBatchQueueRetryAfterS);
  try {
    q.check_batch_queue("a", 0, 11);  // can never fit: not worth a retry
    ADD_FAILURE() << "a batch larger than the whole quota was accepted";
  } catch (const QuotaExceeded&) {
    ADD_FAILURE() << "a batch larger than the whole quota got 429";
  } catch (const api::ApiError& e) {
    EXPECT_EQ(e.status(), 400);
  }
}

TEST(TenantQuotas, TenantsWithoutLimitsAndUnknownTenantsAreNeverRefused) {
  const TenantRegistry reg = registry();
  TenantQuotas q(reg);
  const Clock::time_point t0 = Clock::now();
  std::vector<TenantQuotas::Slot> slots;
  for (int i = 0; i < 100; ++i) slots.push_back(q.admit("b", t0));
  q.charge("b", 1 << 30, t0);
  q.admit("b", t0).release();
  q.check_batch_queue("b", 1 << 30, 1 << 30);
  q.admit("", t0).release();
  q.admit("nobody", t0).release();
  q.check_batch_queue("", 1 << 30, 1 << 30);
}

TEST(TenantQuotas, OneTenantOverItsQuotaDoesNotAffectAnother) {
  const TenantRegistry reg = registry();
  TenantQuotas q(reg);
  q.charge("a", 5000);
  TenantQuotas::Slot held = q.admit("b");
  EXPECT_GT(retry_after([&] { q.admit("a"); }), 0);
  // Threads hammering tenant a's full window while b is admitted and charged.
  std::atomic<bool> stop{false};
  std::vector<std::thread> noisy;
  for (int i = 0; i < 2; ++i)
    noisy.emplace_back([&] {
      while (!stop) retry_after([&] { q.admit("a"); });
    });
  for (int i = 0; i < 1000; ++i) {
    TenantQuotas::Slot s = q.admit("b");
    q.charge("b", 10);
  }
  stop = true;
  for (std::thread& t : noisy) t.join();
  EXPECT_EQ(q.in_flight("a"), 0);
  EXPECT_EQ(q.in_flight("b"), 1);
}

}  // namespace
}  // namespace db::server

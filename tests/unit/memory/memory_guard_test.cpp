// The memory guard's state machine on synthetic readings (limit 1000 bytes, so
// usage reads as tenths of a percent).
#include "memory/memory_guard.h"

#include <gtest/gtest.h>

namespace db {
namespace {

constexpr int64_t kLimit = 1000;

MemoryReading at(double t, int64_t usage, std::optional<int64_t> limit = kLimit) {
  MemoryReading r;
  r.time_s = t;
  r.usage_bytes = usage;
  r.limit_bytes = limit;
  r.rss_bytes = usage;
  return r;
}

MemoryGuardConfig config() {
  MemoryGuardConfig c;
  c.high_water = 0.9;
  c.low_water = 0.8;
  c.backoff_interval_s = 0.5;
  c.growth_margin = 0.01;
  return c;
}

TEST(MemoryGuard, StartsAtTheMaximumOpen) {
  MemoryGuard g(config(), 64);
  EXPECT_EQ(g.decision().max_running, 64);
  EXPECT_FALSE(g.decision().admission_paused);
  EXPECT_FALSE(g.decision().kv_growth_frozen);
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Normal);
  EXPECT_TRUE(g.snapshot().enabled);
}

TEST(MemoryGuard, BelowHighStaysNormal) {
  MemoryGuard g(config(), 64);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(g.observe(at(i, 899)).max_running, 64);
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Normal);
  EXPECT_EQ(g.snapshot().backoffs, 0);
  EXPECT_TRUE(g.take_events().empty());
}

TEST(MemoryGuard, BacksOffByPowersOfTwoNeverBelowOne) {
  MemoryGuard g(config(), 64);
  std::vector<int32_t> caps;
  int64_t usage = 900;
  for (int i = 0; i < 9; ++i, usage += 20) caps.push_back(g.observe(at(i * 1.0, usage)).max_running);
  EXPECT_EQ(caps, (std::vector<int32_t>{32, 16, 8, 4, 2, 1, 1, 1, 1}));
  EXPECT_EQ(g.snapshot().backoffs, 6);  // none counted once the cap is 1
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Shrinking);
  EXPECT_TRUE(g.decision().kv_growth_frozen);
}

TEST(MemoryGuard, RoundsDownToAPowerOfTwo) {
  MemoryGuard g(config(), 48);  // 48 * 0.7 = 33.6 -> 32
  EXPECT_EQ(g.observe(at(0, 950)).max_running, 32);
  MemoryGuard one(config(), 1);
  EXPECT_EQ(one.observe(at(0, 950)).max_running, 1);
  EXPECT_EQ(one.snapshot().state, MemoryGuardState::Shrinking);
}

TEST(MemoryGuard, AtMostOneBackoffPerInterval) {
  MemoryGuard g(config(), 64);
  EXPECT_EQ(g.observe(at(0.0, 920)).max_running, 32);
  EXPECT_EQ(g.observe(at(0.2, 960)).max_running, 32);  // risen, but within the interval
  EXPECT_EQ(g.observe(at(0.4, 990)).max_running, 32);
  EXPECT_EQ(g.observe(at(0.5, 995)).max_running, 16);
  EXPECT_EQ(g.snapshot().backoffs, 2);
}

TEST(MemoryGuard, HighButNotRisingHoldsTheCapAndReopensAdmission) {
  MemoryGuard g(config(), 64);
  MemoryGuardDecision d = g.observe(at(0.0, 920));
  EXPECT_TRUE(d.admission_paused);
  d = g.observe(at(0.3, 925));  // within the interval: still paused
  EXPECT_TRUE(d.admission_paused);
  d = g.observe(at(0.6, 925));  // the cut held (no rise past the margin): admit under the cap
  EXPECT_EQ(d.max_running, 32);
  EXPECT_FALSE(d.admission_paused);
  EXPECT_TRUE(d.kv_growth_frozen);
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Shrinking);
  d = g.observe(at(5.0, 929));  // still within the margin
  EXPECT_EQ(d.max_running, 32);
  d = g.observe(at(5.2, 935));  // risen past the margin: back off again
  EXPECT_EQ(d.max_running, 16);
  EXPECT_TRUE(d.admission_paused);
}

TEST(MemoryGuard, BetweenTheWatermarksStaysShrinking) {
  MemoryGuard g(config(), 64);
  g.observe(at(0.0, 950));
  for (int i = 1; i < 10; ++i) EXPECT_EQ(g.observe(at(i, 850)).max_running, 32);
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Shrinking);
  EXPECT_TRUE(g.decision().kv_growth_frozen);
  EXPECT_FALSE(g.decision().admission_paused);
}

TEST(MemoryGuard, RecoversAdditivelyBackToNormal) {
  MemoryGuard g(config(), 64);  // step = 64 / 16 = 4
  g.observe(at(0.0, 950));
  g.observe(at(1.0, 990));  // 16
  ASSERT_EQ(g.decision().max_running, 16);
  g.take_events();
  MemoryGuardDecision d = g.observe(at(2.0, 700));  // below low: Recovering, cap unchanged
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Recovering);
  EXPECT_EQ(d.max_running, 16);
  EXPECT_FALSE(d.admission_paused);
  EXPECT_FALSE(d.kv_growth_frozen);
  std::vector<int32_t> caps;
  for (int i = 0; i < 12; ++i) caps.push_back(g.observe(at(3.0 + i, 700)).max_running);
  EXPECT_EQ(caps, (std::vector<int32_t>{20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64}));
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Normal);
  EXPECT_EQ(g.snapshot().recoveries, 1);
  const std::vector<std::string> ev = g.take_events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].rfind("recovering", 0), 0u) << ev[0];
  EXPECT_EQ(ev[1].rfind("normal, max running back at 64", 0), 0u) << ev[1];
}

TEST(MemoryGuard, RecoveryStepIsAtLeastOne) {
  MemoryGuard g(config(), 8);
  g.observe(at(0.0, 950));  // 8 -> 4
  g.observe(at(1.0, 100));  // Recovering
  EXPECT_EQ(g.observe(at(2.0, 100)).max_running, 5);
  EXPECT_EQ(g.observe(at(3.0, 100)).max_running, 6);
}

TEST(MemoryGuard, HighWhileRecoveringBacksOffAgain) {
  MemoryGuard g(config(), 64);
  g.observe(at(0.0, 950));  // 32
  g.observe(at(1.0, 500));  // Recovering
  g.observe(at(2.0, 500));  // 36
  EXPECT_EQ(g.observe(at(3.0, 910)).max_running, 16);  // pow2_floor(36 * 0.7 = 25) = 16
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Shrinking);
  EXPECT_EQ(g.snapshot().backoffs, 2);
}

TEST(MemoryGuard, HighRightAfterABackoffPausesButWaitsToCut) {
  MemoryGuardConfig c = config();
  c.backoff_interval_s = 5;
  MemoryGuard g(c, 64);
  g.observe(at(0.0, 950));  // 32
  g.observe(at(0.2, 500));  // Recovering
  MemoryGuardDecision d = g.observe(at(0.4, 950));
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Shrinking);
  EXPECT_EQ(d.max_running, 32);
  EXPECT_TRUE(d.admission_paused);
  EXPECT_TRUE(d.kv_growth_frozen);
  EXPECT_EQ(g.observe(at(5.0, 970)).max_running, 16);
}

TEST(MemoryGuard, EventsNameUsageLimitAndCap) {
  MemoryGuard g(config(), 64);
  MemoryReading r = at(0, 950LL << 20, 1000LL << 20);
  g.observe(r);
  const std::vector<std::string> ev = g.take_events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].find("back-off, max running 64 -> 32"), std::string::npos) << ev[0];
  EXPECT_NE(ev[0].find("usage 950 MiB of 1000 MiB (95.0%)"), std::string::npos) << ev[0];
  EXPECT_NE(ev[0].find("cap 32"), std::string::npos) << ev[0];
  EXPECT_EQ(ev[0].find('\n'), std::string::npos);
  EXPECT_TRUE(g.take_events().empty());  // taken
}

TEST(MemoryGuard, NoLimitStaysNormal) {
  MemoryGuard g(config(), 64);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(g.observe(at(i, int64_t(1) << 40, std::nullopt)).max_running, 64);
  EXPECT_EQ(g.snapshot().state, MemoryGuardState::Normal);
  EXPECT_EQ(g.snapshot().limit_bytes, 0);
}

TEST(MemoryGuard, ConfiguredLimitOverridesTheCgroups) {
  MemoryGuardConfig c = config();
  c.limit_bytes = 2000;
  MemoryGuard g(c, 64);
  EXPECT_EQ(g.observe(at(0, 950)).max_running, 64);  // 950 of 2000
  EXPECT_EQ(g.snapshot().limit_bytes, 2000);
  EXPECT_EQ(g.observe(at(1, 1900, std::nullopt)).max_running, 32);  // no cgroup limit needed
}

TEST(MemoryGuard, DisabledAlwaysAnswersTheMaximum) {
  MemoryGuardConfig c = config();
  c.enabled = false;
  MemoryGuard g(c, 64);
  for (int i = 0; i < 5; ++i) {
    const MemoryGuardDecision d = g.observe(at(i, 999));
    EXPECT_EQ(d.max_running, 64);
    EXPECT_FALSE(d.admission_paused);
    EXPECT_FALSE(d.kv_growth_frozen);
  }
  EXPECT_FALSE(g.snapshot().enabled);
  EXPECT_EQ(g.snapshot().usage_bytes, 999);  // still reported
  EXPECT_EQ(g.snapshot().backoffs, 0);
  EXPECT_TRUE(g.take_events().empty());
}

TEST(MemoryGuard, DueEveryPollInterval) {
  MemoryGuardConfig c = config();
  c.poll_interval_s = 0.2;
  MemoryGuard g(c, 4);
  EXPECT_TRUE(g.due(100.0));
  g.observe(at(100.0, 0));
  EXPECT_FALSE(g.due(100.1));
  EXPECT_TRUE(g.due(100.2));
}

TEST(MemoryGuard, StateNames) {
  EXPECT_STREQ(memory_guard_state_name(MemoryGuardState::Normal), "normal");
  EXPECT_STREQ(memory_guard_state_name(MemoryGuardState::Shrinking), "shrinking");
  EXPECT_STREQ(memory_guard_state_name(MemoryGuardState::Recovering), "recovering");
}

}  // namespace
}  // namespace db

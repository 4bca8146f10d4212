#include "server/engine_watchdog.h"

#include <gtest/gtest.h>

namespace db::server {
namespace {

using std::chrono::seconds;

TEST(EngineWatchdog, StalledOnlyWhenWorkWaitsAndStepsDoNotMove) {
  EngineWatchdog w(10);
  const auto t0 = EngineWatchdog::Clock::now();
  EngineStats s;
  EXPECT_TRUE(w.healthy(s, t0));
  EXPECT_TRUE(w.healthy(s, t0 + seconds(100)));  // idle: no work, never stalled
  s.waiting = 2;
  EXPECT_TRUE(w.healthy(s, t0 + seconds(105)));
  EXPECT_TRUE(w.healthy(s, t0 + seconds(109)));
  EXPECT_FALSE(w.healthy(s, t0 + seconds(116)));  // work, no step for 11 s
  s.steps = 1;
  EXPECT_TRUE(w.healthy(s, t0 + seconds(117)));  // stepping again
  EXPECT_TRUE(w.healthy(s, t0 + seconds(120)));
}

}  // namespace
}  // namespace db::server

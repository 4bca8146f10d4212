// The thread pool's contention monitor (util/contention_monitor.h): when it
// measures a region, when it goes serial, and how it probes parallel mode again.
#include "util/contention_monitor.h"

#include <gtest/gtest.h>

namespace db {
namespace {

using M = ContentionMonitor;

// Feeds one window of regions of 100 us each in which the caller ran `share`
// of the wall time (and slept `slept_share` of it); returns the time after it.
int64_t feed_window(M& m, int64_t now, double share, double slept_share = 0.0) {
  constexpr int64_t kWall = 100'000;
  for (int i = 0; i < M::kWindow; ++i) {
    now += M::kSampleGapNs;
    EXPECT_TRUE(m.should_sample(now));
    now += kWall;
    m.add(kWall, static_cast<int64_t>(share * kWall), static_cast<int64_t>(slept_share * kWall), now);
  }
  return now;
}

TEST(ContentionMonitor, MeasuresARegionOnlyAfterTheGap) {
  M m;
  EXPECT_TRUE(m.should_sample(0));
  m.add(1000, 1000, 0, 5000);
  EXPECT_FALSE(m.should_sample(5000));
  EXPECT_FALSE(m.should_sample(5000 + M::kSampleGapNs - 1));
  EXPECT_TRUE(m.should_sample(5000 + M::kSampleGapNs));
}

TEST(ContentionMonitor, StaysParallelWhileTheCallerGetsItsShare) {
  M m;
  int64_t now = 0;
  for (int w = 0; w < 3; ++w) now = feed_window(m, now, 0.95);
  EXPECT_TRUE(m.parallel());
}

TEST(ContentionMonitor, GoesSerialAtTheEndOfAStarvedWindow) {
  M m;
  int64_t now = 0;
  for (int i = 0; i + 1 < M::kWindow; ++i) {
    now += M::kSampleGapNs;
    m.add(100'000, 30'000, 0, now);
  }
  EXPECT_TRUE(m.parallel()) << "decided before the window was full";
  m.add(100'000, 30'000, 0, now + M::kSampleGapNs);
  EXPECT_FALSE(m.parallel());
}

TEST(ContentionMonitor, TimeAsleepWaitingForWorkersIsNotStarvation) {
  M m;
  feed_window(m, 0, 0.3, 0.7);  // ran all the time it was awake
  EXPECT_TRUE(m.parallel());
}

TEST(ContentionMonitor, IgnoresRegionsWithoutACpuTime) {
  M m;
  int64_t now = 0;
  for (int i = 0; i < 2 * M::kWindow; ++i) {
    now += M::kSampleGapNs;
    m.add(100'000, -1, 0, now);
  }
  EXPECT_TRUE(m.parallel());
}

TEST(ContentionMonitor, ProbesAgainAfterABackoffThatDoublesOnEachFailedProbe) {
  M m;
  int64_t now = feed_window(m, 0, 0.3);
  ASSERT_FALSE(m.parallel());
  now = feed_window(m, now, 0.3);  // one window serial, then the probe
  ASSERT_TRUE(m.parallel());
  now = feed_window(m, now, 0.3);  // the probe starved: two windows serial now
  ASSERT_FALSE(m.parallel());
  now = feed_window(m, now, 0.3);
  EXPECT_FALSE(m.parallel());
  now = feed_window(m, now, 0.3);
  ASSERT_TRUE(m.parallel());
  now = feed_window(m, now, 0.95);  // the probe held: the backoff starts again from one
  ASSERT_TRUE(m.parallel());
  now = feed_window(m, now, 0.3);
  ASSERT_FALSE(m.parallel());
  feed_window(m, now, 0.3);
  EXPECT_TRUE(m.parallel());
}

}  // namespace
}  // namespace db

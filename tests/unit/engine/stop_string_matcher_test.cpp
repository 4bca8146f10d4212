#include "engine/stop_string_matcher.h"

#include <gtest/gtest.h>

namespace db {
namespace {

TEST(StopStringMatcher, HoldsBackPossibleStartsAndReleasesThemWhenTheyFail) {
  StopStringMatcher m({"END"});
  auto r = m.push("abc E");
  EXPECT_EQ(r.text, "abc ");
  EXPECT_FALSE(r.matched);
  r = m.push("NX");
  EXPECT_EQ(r.text, "ENX");
  r = m.push("xEN");
  EXPECT_EQ(r.text, "x");
  r = m.push("D! more");
  EXPECT_EQ(r.text, "");
  ASSERT_TRUE(r.matched);
  EXPECT_EQ(*r.matched, 0u);
  EXPECT_TRUE(m.matched());
  EXPECT_EQ(m.push("anything").text, "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStringMatcher, EarliestMatchWinsAmongSeveralStops) {
  StopStringMatcher m({"world", "lo w", "\n\n"});
  const auto r = m.push("hello world\n\n");
  EXPECT_EQ(r.text, "hel");
  ASSERT_TRUE(r.matched);
  EXPECT_EQ(*r.matched, 1u);
}

TEST(StopStringMatcher, FlushReleasesTheHeldTail) {
  StopStringMatcher m({"stop here"});
  EXPECT_EQ(m.push("we stop").text, "we ");
  EXPECT_EQ(m.flush(), "stop");
}

TEST(StopStringMatcher, MultiByteStopStringsHoldWholeCharacters) {
  StopStringMatcher m({"\xC3\xA9t\xC3\xA9"});  // "été"
  EXPECT_EQ(m.push("un \xC3\xA9").text, "un ");
  const auto r = m.push("t\xC3\xA9 chaud");
  EXPECT_EQ(r.text, "");
  EXPECT_TRUE(r.matched);
}

TEST(StopStringMatcher, NoStopsPassEverythingThrough) {
  StopStringMatcher m({"", ""});
  EXPECT_EQ(m.push("abc").text, "abc");
  EXPECT_EQ(m.flush(), "");
}

}  // namespace
}  // namespace db

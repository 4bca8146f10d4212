#include "spec/draft_governor.h"

#include <gtest/gtest.h>

namespace db {
namespace {

// A bucket's first step is a warm-up; the second is its first measurement.
void measure(StepCostModel& m, int32_t tokens, double seconds) {
  m.observe(tokens, seconds);
  m.observe(tokens, seconds);
}

// A step of n tokens costs fixed + per_token * n seconds.
StepCostModel linear_cost(double fixed, double per_token) {
  StepCostModel m;
  for (int32_t n : {1, 2, 4, 8, 16, 64, 128, 256, 512, 1024}) measure(m, n, fixed + per_token * n);
  return m;
}

TEST(DraftGovernor, NothingBeforeAPlainStepOfThisSizeWasMeasured) {
  DraftGovernor g(5);
  const RequestId ids[] = {1, 2};
  EXPECT_EQ(g.allot(ids, 2, StepCostModel{}, 1.0), (std::vector<int32_t>{0, 0}));
}

TEST(DraftGovernor, EveryDraftWhileTheStepWithThemIsUnmeasured) {
  DraftGovernor g(5);
  StepCostModel m;
  measure(m, 2, 0.01);
  const RequestId ids[] = {1, 2};
  EXPECT_EQ(g.allot(ids, 2, m, 1.0), (std::vector<int32_t>{5, 5}));
}

TEST(DraftGovernor, MemoryBoundStepsTakeEveryDraftComputeBoundOnesNone) {
  const RequestId one[] = {1};
  for (int i = 0; i < 3; ++i) {
    DraftGovernor g(5);
    for (int r = 0; r < 10; ++r) g.record(1, 4, 2);  // acceptance about 2/3
    // Weight-read bound: a token adds 1% of the step.
    EXPECT_EQ(g.allot(one, 1, linear_cost(0.010, 0.0001), 1.0), (std::vector<int32_t>{5}));
  }
  DraftGovernor g(5);
  for (int r = 0; r < 10; ++r) g.record(1, 4, 2);
  std::vector<RequestId> ids;
  for (RequestId id = 1; id <= 64; ++id) ids.push_back(id);
  // Compute-bound at 64: every token costs the same, so a draft emitting < 1 token never pays.
  for (int step = 0; step < 3 * DraftGovernor::kProbeInterval; ++step)  // and no probes either
    EXPECT_EQ(g.allot(ids, 64, linear_cost(0.0, 0.001), 1.0), std::vector<int32_t>(64, 0));
}

TEST(DraftGovernor, DraftsGoToTheSequencesMostLikelyToBeAccepted) {
  DraftGovernor g(8);
  for (int i = 0; i < 20; ++i) {
    g.record(1, 4, 4);  // always all accepted
    g.record(2, 4, 0);  // always rejected
  }
  EXPECT_GT(g.acceptance(1), 0.9);
  EXPECT_LT(g.acceptance(2), 0.25);  // pulled toward the overall rate by its prior
  const RequestId ids[] = {1, 2};
  // Halfway compute-bound: fixed cost = 2 tokens' worth.
  const std::vector<int32_t> k = g.allot(ids, 2, linear_cost(0.002, 0.001), 1.0);
  EXPECT_GE(k[0], 6);
  EXPECT_EQ(k[1], 0);
}

TEST(DraftGovernor, ALeftOutSequenceProbesNowAndThen) {
  DraftGovernor g(4);
  for (int i = 0; i < 20; ++i) g.record(1, 4, 0);
  const RequestId one[] = {1};
  const StepCostModel cost = linear_cost(0.002, 0.001);
  int probes = 0;
  for (int step = 0; step < 4 * DraftGovernor::kProbeInterval; ++step) probes += g.allot(one, 1, cost, 1.0)[0] > 0;
  EXPECT_EQ(probes, 4);
  for (int i = 0; i < 20; ++i) g.record(1, 4, 4);  // accepted again: drafts again
  EXPECT_GT(g.allot(one, 1, cost, 1.0)[0], 0);
}

TEST(DraftGovernor, ANewSequenceStartsFromTheOverallRate) {
  DraftGovernor g(4);
  for (int i = 0; i < 50; ++i) g.record(1, 4, 4);
  EXPECT_GT(g.acceptance(99), 0.9);
  g.forget(1);
  EXPECT_GT(g.acceptance(1), 0.9);
}

// What the proposer costs per draft token counts against its drafts: free
// drafts pay at 2/3 acceptance, drafts that each cost a whole step do not, and
// ones that cost a fifth of a step are fewer unless acceptance is high.
TEST(DraftGovernor, AProposersOwnCostCountsAgainstItsDrafts) {
  const RequestId one[] = {1};
  const StepCostModel cost = linear_cost(0.010, 0.0001);
  DraftGovernor g(5);
  for (int r = 0; r < 10; ++r) g.record(1, 4, 2);
  EXPECT_EQ(g.allot(one, 1, cost, 1.0, 0.0), (std::vector<int32_t>{5}));
  EXPECT_EQ(g.allot(one, 1, cost, 1.0, 0.010), (std::vector<int32_t>{0}));
  const int32_t k = g.allot(one, 1, cost, 1.0, 0.002)[0];
  EXPECT_GT(k, 0);
  EXPECT_LT(k, 5);
  DraftGovernor sure(5);
  for (int r = 0; r < 10; ++r) sure.record(1, 5, 5);
  EXPECT_EQ(sure.allot(one, 1, cost, 1.0, 0.002), (std::vector<int32_t>{5}));
}

}  // namespace
}  // namespace db

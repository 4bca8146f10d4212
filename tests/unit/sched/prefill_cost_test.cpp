// Pricing prompt chunks by cost: the cost function, the cost-capped chunk sizes
// of the step budget, and the fit of the attention rate from step times.
#include <gtest/gtest.h>

#include "sched/budget_split.h"
#include "sched/prefill_cost.h"
#include "sched/step_cost_fit.h"

namespace db::test {
namespace {

// About SmolLM2-135M's ratio of attention MACs per position to matmul MACs per token.
constexpr double kShapeRate = 3.3e-4;

TEST(PrefillCost, ATokenCostsItsMatmulsPlusItsAttentionOverTheContextBeforeIt) {
  const PrefillCost c{0.001};
  EXPECT_DOUBLE_EQ(c.cost(0, 0), 0);
  EXPECT_DOUBLE_EQ(c.cost(0, 1), 1.001);  // attends to itself
  // Ten tokens at 7000..7009 attend to 7001..7010 positions: 70,055 in all.
  EXPECT_DOUBLE_EQ(c.cost(7000, 10), 10 + 0.001 * 70055);
  EXPECT_DOUBLE_EQ(PrefillCost{}.cost(7000, 10), 10);  // rate 0: tokens
}

TEST(PrefillCost, MaxTokensIsTheLargestChunkWithinTheBudget) {
  for (double rate : {0.0, 1e-5, kShapeRate, 0.01, 1.0}) {
    const PrefillCost c{rate};
    for (int64_t p : {0, 1, 100, 7000, 100000}) {
      for (double budget : {0.5, 1.0, 17.0, 64.0 * 1.01, 512.0, 5000.0}) {
        for (int32_t limit : {1, 7, 64, 512, 8000}) {
          const int32_t n = c.max_tokens(p, budget, limit);
          ASSERT_LE(n, limit);
          ASSERT_LE(c.cost(p, n), budget) << "rate " << rate << " p " << p << " budget " << budget;
          if (n < limit) {
            ASSERT_GT(c.cost(p, n + 1), budget) << "rate " << rate << " p " << p << " budget " << budget;
          }
        }
      }
    }
  }
  EXPECT_EQ(PrefillCost{}.max_tokens(7000, 64, 100), 64);
  EXPECT_EQ(PrefillCost{1.0}.max_tokens(10, 5, 100), 0);  // one token costs 12
  EXPECT_EQ(PrefillCost{1.0}.max_tokens(0, 5, 0), 0);
}

TEST(PrefillCost, AChunkAlwaysHoldsOneToken) {
  EXPECT_EQ(PrefillCost{1.0}.chunk(10, 5, 100), 1);
  EXPECT_EQ(PrefillCost{1.0}.chunk(10, 5, 0), 0);  // nothing allowed: nothing
  EXPECT_EQ(PrefillCost{0.0}.chunk(10, 5, 100), 5);
}

TEST(PrefillCost, RateIsAttentionMacsPerPositionOverMatmulMacsPerToken) {
  EXPECT_DOUBLE_EQ(prefill_cost_from_macs(4e6, 1200).attention_per_position, 3e-4);
  EXPECT_DOUBLE_EQ(prefill_cost_from_macs(0, 1200).attention_per_position, 0);
  EXPECT_DOUBLE_EQ(prefill_cost_from_macs(4e6, 0).attention_per_position, 0);
}

TEST(CostCappedChunks, AChunkDeepInAPromptGetsFewerTokensThanOneAtItsStart) {
  const ChunkLimits limits{512, 64};
  const PrefillCost cost{kShapeRate};
  const StepBudget alone(2048, limits, 0, false, cost);
  EXPECT_EQ(alone.offer(8000, 0), 512);  // at position 0 the cap is the cap
  const int32_t deep = alone.offer(1000, 7000);
  EXPECT_LT(deep, 512);
  EXPECT_GT(deep, 100);
  EXPECT_LE(cost.cost(7000, deep), cost.cost(0, 512));
  EXPECT_GT(cost.cost(7000, deep + 1), cost.cost(0, 512));  // and as many as that cost allows

  const StepBudget shared(2048, limits, 1, true, cost);
  EXPECT_EQ(shared.offer(8000, 0), 64);
  EXPECT_LT(shared.offer(1000, 7000), 64);
  EXPECT_LE(cost.cost(7000, shared.offer(1000, 7000)), cost.cost(0, 64));

  const StepBudget by_tokens(2048, limits, 0, false);  // the default prices tokens: no cut
  EXPECT_EQ(by_tokens.offer(1000, 7000), 512);
}

TEST(CostCappedChunks, TheCapsCostIsNeverExceededButByTheOneTokenMinimum) {
  const ChunkLimits limits{512, 64};
  for (double rate : {kShapeRate, 1.5e-3, 0.05, 2.0}) {
    const PrefillCost cost{rate};
    for (bool shared : {false, true}) {
      const StepBudget b(2048, limits, shared ? 8 : 0, shared, cost);
      const double cap_cost = cost.cost(0, shared ? 64 : 512);
      for (int64_t p = 0; p <= 32000; p += 250) {
        const int32_t n = b.offer(100000, p);
        ASSERT_GE(n, 1) << "a long prompt always progresses";
        ASSERT_TRUE(cost.cost(p, n) <= cap_cost || n == 1) << "rate " << rate << " p " << p << " n " << n;
      }
    }
  }
}

TEST(CostCappedChunks, DecodesAreShortWorkAtAnyDepthButADeepPromptTailIsNot) {
  const ChunkLimits limits{512, 64};
  const PrefillCost cost{1.5e-3};
  StepBudget b(100, limits, /*short_reserved=*/2, true, cost);
  EXPECT_TRUE(b.is_short(1, 100000));   // a decode at position 100,000
  EXPECT_EQ(b.offer(1, 100000), 1);
  EXPECT_TRUE(b.is_short(64, 0));       // a short prompt
  EXPECT_FALSE(b.is_short(64, 7000));   // 64 tokens at 7000 cost far more than a shared chunk at 0
  EXPECT_LT(b.offer(64, 7000), 64);     // so it is chunked like a long prompt
  b.take(1, 100000, 1);
  b.take(1, 50000, 1);
  EXPECT_EQ(b.offer(8000, 7000), cost.max_tokens(7000, cost.cost(0, 64), 64));
}

StepCostFit::Work work(double tokens, double positions) { return StepCostFit::Work{tokens, positions}; }

TEST(StepCostFit, StepWorkCountsThePositionsEachTokenAttendsTo) {
  SchedulerOutput so;
  ScheduledRequest chunk;
  chunk.num_computed_tokens = 10;
  chunk.num_scheduled_tokens = 3;  // positions 10, 11, 12 attend to 11, 12, 13
  ScheduledRequest decode;
  decode.num_computed_tokens = 99;
  decode.num_scheduled_tokens = 1;
  so.scheduled_running.push_back(chunk);
  so.scheduled_new.push_back(decode);
  const StepCostFit::Work w = StepCostFit::work_of(so);
  EXPECT_EQ(w.tokens, 4);
  EXPECT_EQ(w.positions, 36 + 100);
}

TEST(StepCostFit, RecoversTheAttentionRateOfMeasuredSteps) {
  // Steps take 5 ms + 1 ms per token + 5 us per attended position: a rate of
  // 5e-3, 15x the prior's.
  const double fixed = 0.005, per_token = 0.001, per_position = 5e-6;
  StepCostFit fit(PrefillCost{kShapeRate});
  const auto seconds = [&](const StepCostFit::Work& w) {
    return fixed + per_token * w.tokens + per_position * w.positions;
  };
  const StepCostFit::Work decode = work(1, 300), first_chunk = work(512, 512.0 * 513 / 2);
  fit.observe(decode, seconds(decode));
  fit.observe(first_chunk, seconds(first_chunk));
  EXPECT_FALSE(fit.fitted());  // attention barely matters in these steps: the prior holds
  EXPECT_DOUBLE_EQ(fit.estimate().attention_per_position, kShapeRate);
  for (int64_t p = 512; p < 8000; p += 160) {
    const StepCostFit::Work chunk = work(160, 160.0 * p + 160.0 * 161 / 2);
    fit.observe(chunk, seconds(chunk));
    fit.observe(decode, seconds(decode));
  }
  EXPECT_TRUE(fit.fitted());
  EXPECT_NEAR(fit.estimate().attention_per_position, per_position / per_token, 1e-6);
}

TEST(StepCostFit, KeepsItsEstimateWithinBoundsOfThePriorAndIgnoresEmptySteps) {
  StepCostFit fit(PrefillCost{kShapeRate});
  EXPECT_FALSE(fit.observe(work(0, 0), 0.01));
  EXPECT_FALSE(fit.observe(work(10, 10), 0));
  for (int64_t p = 0; p < 8000; p += 100) {  // attention a thousand times the prior's rate
    const double n = p % 200 == 0 ? 100 : 50;
    const StepCostFit::Work chunk = work(n, n * p + n * (n + 1) / 2);
    fit.observe(chunk, 0.001 + 0.001 * chunk.tokens + 0.001 * kShapeRate * 1000 * chunk.positions);
  }
  EXPECT_TRUE(fit.fitted());
  EXPECT_DOUBLE_EQ(fit.estimate().attention_per_position, 64 * kShapeRate);

  StepCostFit none(PrefillCost{});  // no prior rate: nothing to refine
  for (int i = 0; i < 10; ++i) none.observe(work(100, 1e6), 1.0);
  EXPECT_FALSE(none.fitted());
  EXPECT_EQ(none.estimate().attention_per_position, 0);
}

}  // namespace
}  // namespace db::test

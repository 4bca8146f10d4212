// RouterStats arithmetic: cumulative counts per layer and expert, the last
// step's imbalance, step counting, deltas between snapshots, and misuse.
#include "model/router_stats.h"

#include <gtest/gtest.h>

#include <vector>

#include "util/error.h"

namespace db {
namespace {

TEST(LoadImbalance, IsBusiestOverMean) {
  EXPECT_DOUBLE_EQ(load_imbalance(std::vector<int64_t>{2, 2, 2, 2}), 1.0);
  EXPECT_DOUBLE_EQ(load_imbalance(std::vector<int64_t>{6, 0, 1, 1}), 3.0);  // mean 2
  EXPECT_DOUBLE_EQ(load_imbalance(std::vector<int64_t>{0, 5, 0, 0}), 4.0);  // all on one of 4
  EXPECT_DOUBLE_EQ(load_imbalance(std::vector<int64_t>{0, 0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(load_imbalance(std::vector<int64_t>{}), 0.0);
}

TEST(RouterStats, ShapeOfADensePrefixAndMoeLayers) {
  const RouterStats s(4, 1, 3);
  EXPECT_FALSE(s.empty());
  EXPECT_FALSE(s.is_moe_layer(0));
  EXPECT_TRUE(s.is_moe_layer(1));
  EXPECT_TRUE(s.is_moe_layer(3));
  EXPECT_FALSE(s.is_moe_layer(4));
  EXPECT_EQ(s.tokens.size(), 12u);
  EXPECT_EQ(s.last_imbalance.size(), 4u);
  EXPECT_EQ(s.steps, 0);
  EXPECT_TRUE(RouterStats().empty());
  EXPECT_TRUE(RouterStats(4, 0, 0).empty());
  EXPECT_FALSE(RouterStats(4, 0, 0).is_moe_layer(0));
  EXPECT_EQ(RouterStats(2, 5, 3).first_moe_layer, 2);  // clamped: no MoE layer
}

TEST(RouterStats, RecordAccumulatesPerLayerAndCountsSteps) {
  RouterStats s(3, 1, 4);
  // Step 1: 3 tokens, 2 experts each, in both MoE layers.
  s.record(1, std::vector<int64_t>{3, 1, 1, 1});
  s.record(2, std::vector<int64_t>{0, 2, 2, 2});
  EXPECT_EQ(s.steps, 1);
  EXPECT_DOUBLE_EQ(s.last_imbalance[1], 2.0);
  EXPECT_DOUBLE_EQ(s.last_imbalance[2], 8.0 / 6.0);
  // Step 2: 1 token.
  s.record(1, std::vector<int64_t>{0, 1, 1, 0});
  s.record(2, std::vector<int64_t>{1, 0, 0, 1});
  EXPECT_EQ(s.steps, 2);
  EXPECT_EQ(s.layer_total(0), 0);
  EXPECT_EQ(s.layer_total(1), 8);
  EXPECT_EQ(s.layer_total(2), 8);
  EXPECT_EQ(std::vector<int64_t>(s.layer_tokens(1).begin(), s.layer_tokens(1).end()),
            (std::vector<int64_t>{3, 2, 2, 1}));
  EXPECT_EQ(std::vector<int64_t>(s.layer_tokens(2).begin(), s.layer_tokens(2).end()),
            (std::vector<int64_t>{1, 2, 2, 3}));
  EXPECT_DOUBLE_EQ(s.imbalance(1), 1.5);    // 3 / mean 2
  EXPECT_DOUBLE_EQ(s.imbalance(0), 0.0);    // dense
  EXPECT_DOUBLE_EQ(s.last_imbalance[1], 2.0);  // the last step: 1 / mean 0.5
  EXPECT_DOUBLE_EQ(s.last_imbalance[0], 0.0);
}

TEST(RouterStats, RejectsDenseLayersAndWrongCounts) {
  RouterStats s(3, 1, 4);
  EXPECT_THROW(s.record(0, std::vector<int64_t>{1, 0, 0, 0}), Error);
  EXPECT_THROW(s.record(3, std::vector<int64_t>{1, 0, 0, 0}), Error);
  EXPECT_THROW(s.record(1, std::vector<int64_t>{1, 0, 0}), Error);
  EXPECT_THROW(s.layer_tokens(3), Error);
  EXPECT_EQ(s.steps, 0);
  EXPECT_EQ(s.layer_total(1), 0);
}

TEST(RouterStats, DeltaIsWhatWasRoutedBetweenSnapshots) {
  RouterStats s(2, 0, 2);
  s.record(0, std::vector<int64_t>{2, 0});
  s.record(1, std::vector<int64_t>{1, 1});
  const RouterStats before = s;
  s.record(0, std::vector<int64_t>{0, 3});
  s.record(1, std::vector<int64_t>{3, 0});
  const RouterStats d = router_stats_delta(s, before);
  EXPECT_EQ(d.steps, 1);
  EXPECT_EQ(d.tokens, (std::vector<int64_t>{0, 3, 3, 0}));
  EXPECT_EQ(d.last_imbalance, s.last_imbalance);
  EXPECT_EQ(router_stats_delta(s, RouterStats()).tokens, s.tokens);  // empty before: from zero
  EXPECT_TRUE(router_stats_delta(RouterStats(), RouterStats()).empty());
  EXPECT_THROW(router_stats_delta(s, RouterStats(2, 1, 2)), Error);
}

TEST(RouterStats, RankRoutedTokensFollowTheExpertSplit) {
  RouterStats s(3, 1, 5);  // layer 0 dense; 5 experts over 2 ranks: [0, 2) and [2, 5)
  s.record(1, std::vector<int64_t>{1, 2, 3, 4, 5});
  s.record(2, std::vector<int64_t>{6, 0, 0, 1, 0});
  EXPECT_EQ(rank_routed_tokens(s), (std::vector<int64_t>{22}));  // one process: every expert
  s.expert_parallel_size = 2;
  EXPECT_EQ(rank_routed_tokens(s), (std::vector<int64_t>{1 + 2 + 6, 3 + 4 + 5 + 1}));
  s.expert_parallel_size = 3;  // [0, 1), [1, 3), [3, 5)
  EXPECT_EQ(rank_routed_tokens(s), (std::vector<int64_t>{1 + 6, 2 + 3, 4 + 5 + 1}));
  s.expert_parallel_size = 5;
  EXPECT_EQ(rank_routed_tokens(s), (std::vector<int64_t>{7, 2, 3, 5, 5}));
  s.expert_parallel_size = 6;  // a rank would hold no expert
  EXPECT_THROW(rank_routed_tokens(s), Error);
  EXPECT_TRUE(rank_routed_tokens(RouterStats()).empty());
  s.expert_parallel_size = 2;
  EXPECT_EQ(router_stats_delta(s, RouterStats()).expert_parallel_size, 2);
}

}  // namespace
}  // namespace db

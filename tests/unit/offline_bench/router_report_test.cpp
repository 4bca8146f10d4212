// The bench's router report: per-layer figures of a run's router counts, the
// summary over layers, its JSON and text forms, and its absence for dense models.
#include "offline_bench/router_report.h"

#include <gtest/gtest.h>

#include <vector>

#include "offline_bench/bench_report.h"

namespace db::bench {
namespace {

// 4 layers (layer 0 dense) of 4 experts, 8 routed tokens each; imbalances 1.5, 1, 2.
RouterStats sample_routed() {
  RouterStats s(4, 1, 4);
  s.record(1, std::vector<int64_t>{3, 2, 2, 1});
  s.record(2, std::vector<int64_t>{2, 2, 2, 2});
  s.record(3, std::vector<int64_t>{0, 1, 4, 3});
  return s;
}

TEST(RouterReport, PerLayerFiguresAndSummary) {
  const RouterReport r = make_router_report(sample_routed());
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.n_experts, 4);
  EXPECT_EQ(r.steps, 1);
  ASSERT_EQ(r.layers.size(), 3u);  // the MoE layers only
  EXPECT_EQ(r.layers[0].layer, 1);
  EXPECT_EQ(r.layers[0].routed_tokens, 8);
  EXPECT_DOUBLE_EQ(r.layers[0].imbalance, 1.5);
  EXPECT_EQ(r.layers[0].busiest_expert, 0);
  EXPECT_DOUBLE_EQ(r.layers[0].busiest_share, 3.0 / 8.0);
  EXPECT_EQ(r.layers[2].tokens_per_expert, (std::vector<int64_t>{0, 1, 4, 3}));
  EXPECT_DOUBLE_EQ(r.imbalance_min, 1.0);
  EXPECT_DOUBLE_EQ(r.imbalance_median, 1.5);
  EXPECT_DOUBLE_EQ(r.imbalance_max, 2.0);
  EXPECT_EQ(r.busiest_layer, 3);
  EXPECT_EQ(r.busiest_expert, 2);
  EXPECT_DOUBLE_EQ(r.busiest_share, 0.5);
}

TEST(RouterReport, NothingRoutedHasNoBusiestExpert) {
  const RouterReport r = make_router_report(RouterStats(2, 0, 4));
  EXPECT_EQ(r.layers.size(), 2u);
  EXPECT_DOUBLE_EQ(r.imbalance_max, 0.0);
  EXPECT_EQ(r.busiest_layer, -1);
  EXPECT_NE(router_table_row(1, "mixed", r).find(" -\n"), std::string::npos);
}

TEST(RouterReport, JsonAndTableRow) {
  const RouterReport r = make_router_report(sample_routed());
  const auto j = to_json(r);
  EXPECT_EQ(j.at("n_experts"), 4);
  EXPECT_DOUBLE_EQ(j.at("imbalance").at("median").get<double>(), 1.5);
  EXPECT_EQ(j.at("busiest").at("layer"), 3);
  ASSERT_EQ(j.at("layers").size(), 3u);
  EXPECT_EQ(j.at("layers")[1].at("layer"), 2);
  EXPECT_EQ(j.at("layers")[1].at("tokens_per_expert"), nlohmann::json({2, 2, 2, 2}));
  const std::string row = router_table_row(8, "mixed", r);
  EXPECT_NE(row.find("1.00/1.50/2.00"), std::string::npos) << row;
  EXPECT_NE(row.find("3 x 4"), std::string::npos) << row;
  EXPECT_NE(row.find("layer 3 expert 2: 50.0% (25.0%)"), std::string::npos) << row;
}

TEST(RouterReport, RunReportsCarryItOnlyForMoeModels) {
  RunMeasurements m;
  m.max_num_seqs = 4;
  const RunReport dense = make_run_report(m);
  EXPECT_TRUE(dense.router.empty());
  EXPECT_FALSE(to_json(dense).contains("router"));
  EXPECT_EQ(format_router_table({dense}), "");

  m.router = sample_routed();
  const RunReport moe = make_run_report(m);
  EXPECT_EQ(to_json(moe).at("router").at("layers").size(), 3u);
  const std::string table = format_router_table({dense, moe});
  EXPECT_NE(table.find("MoE router"), std::string::npos) << table;
  EXPECT_NE(table.find("     4 mixed"), std::string::npos) << table;
  EXPECT_EQ(table.find('\n', table.find("     4 mixed")) + 1, table.size()) << table;  // one row: the MoE run
}

}  // namespace
}  // namespace db::bench

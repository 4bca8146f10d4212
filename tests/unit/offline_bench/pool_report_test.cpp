#include "offline_bench/pool_report.h"

#include <gtest/gtest.h>

#include "offline_bench/bench_report.h"

namespace db::bench {
namespace {

EngineStats pool_stats(int64_t evicted) {
  EngineStats s;
  s.pool.num_usable_blocks = 127;
  s.pool.num_free_blocks = 100;
  s.pool.largest_free_run = 41;
  s.pool.num_cached_blocks = 30;
  s.resident_blocks = 90;
  s.evicted_blocks = evicted;
  return s;
}

TEST(PoolReport, EndStateAndEvictionsDuringTheRun) {
  const PoolReport r = make_pool_report(pool_stats(25), pool_stats(5));
  EXPECT_EQ(r.usable_blocks, 127);
  EXPECT_EQ(r.free_blocks, 100);
  EXPECT_EQ(r.largest_free_run, 41);
  EXPECT_EQ(r.cached_blocks, 30);
  EXPECT_EQ(r.resident_blocks, 90);
  EXPECT_EQ(r.evicted_blocks, 20);
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j.at("largest_free_run"), 41);
  EXPECT_EQ(j.at("evicted_blocks"), 20);
}

TEST(PoolReport, OneTableRowPerRunAndInTheJson) {
  RunMeasurements m;
  m.max_num_seqs = 8;
  m.pool = make_pool_report(pool_stats(7), pool_stats(0));
  const RunReport r = make_run_report(m);
  const std::string table = format_pool_table({r});
  EXPECT_NE(table.find("largest run"), std::string::npos) << table;
  EXPECT_NE(table.find(pool_table_row(8, "mixed", r.pool)), std::string::npos) << table;
  EXPECT_NE(pool_table_row(8, "mixed", r.pool).find(" 41 "), std::string::npos);
  EXPECT_EQ(to_json(r).at("kv_pool").at("evicted_blocks"), 7);
  EXPECT_TRUE(metric_definitions().contains("kv_pool"));
}

}  // namespace
}  // namespace db::bench

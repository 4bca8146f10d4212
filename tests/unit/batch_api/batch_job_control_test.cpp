// The controls run_batch_job offers to a server: a stop flag (nothing more runs,
// aborted requests get no record, a rerun finishes the rest exactly once), live
// counters over the whole file, and a priority override.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include <nlohmann/json.hpp>

#include "batch/batch_job.h"
#include "batch/journal.h"
#include "batch_api_test_util.h"
#include "bundle/model_bundle.h"
#include "default_model.h"
#include "engine/engine.h"

namespace db::batch {
namespace {

using nlohmann::json;

class BatchJobControlTest : public test::DefaultModelSuite<ModelBundle> {
 protected:
  void SetUp() override {
    DefaultModelSuite::SetUp();
    if (HasFatalFailure()) return;
    engine_ = test::make_engine(*model_, 8);
  }

  // `n` greedy completion requests of `max_tokens` each, plus one with a bad body.
  BatchJobOptions options(int n, int max_tokens) {
    std::vector<json> bodies;
    for (int i = 0; i < n; ++i)
      bodies.push_back({{"prompt", "Number " + std::to_string(i)}, {"max_tokens", max_tokens}, {"temperature", 0}});
    return test::completion_batch(dir_, *model_, bodies);
  }

  std::map<std::string, int> output_ids() {
    std::map<std::string, int> ids;
    std::ifstream in(dir_.file("out.jsonl"));
    std::string line;
    while (std::getline(in, line)) ++ids[json::parse(line)["custom_id"].get<std::string>()];
    return ids;
  }

  test::ScratchDir dir_{"batch_job_control"};
  std::unique_ptr<Engine> engine_;
};

TEST_F(BatchJobControlTest, CountersCoverTheWholeFileAndPriorityIsApplied) {
  BatchJobOptions o = options(3, 2);
  BatchCounters counters;
  o.counters = &counters;
  o.priority = 2;
  const BatchSummary s = run_batch_job(*engine_, *model_, o);
  EXPECT_FALSE(s.stopped);
  EXPECT_EQ(counters.total.load(), 4u);
  EXPECT_EQ(counters.completed.load(), 3u);
  EXPECT_EQ(counters.failed.load(), 1u);
  const JournalState state = recover_journal(o.output_path);
  EXPECT_EQ(state.records, 4u);
  EXPECT_EQ(state.error_records, 1u);
  // A rerun finds everything done and still reports the whole file.
  BatchCounters again;
  o.counters = &again;
  EXPECT_EQ(run_batch_job(*engine_, *model_, o).skipped, 4u);
  EXPECT_EQ(again.completed.load(), 3u);
  EXPECT_EQ(again.failed.load(), 1u);
  // An out-of-range priority is the engine's to refuse: every request fails, nothing throws.
  BatchJobOptions bad = options(2, 2);
  bad.output_path = dir_.file("bad_priority.jsonl");
  bad.priority = 7;
  EXPECT_EQ(run_batch_job(*engine_, *model_, bad).ok, 0u);
}

TEST_F(BatchJobControlTest, StopSetBeforehandRunsNothing) {
  BatchJobOptions o = options(4, 2);
  std::atomic<bool> stop{true};
  o.stop = &stop;
  const BatchSummary s = run_batch_job(*engine_, *model_, o);
  EXPECT_TRUE(s.stopped);
  EXPECT_EQ(s.ok, 0u);
  const std::map<std::string, int> ids = output_ids();
  EXPECT_EQ(ids.size(), 1u);  // only the bad line, written before anything runs
  EXPECT_EQ(ids.count("bad"), 1u);
}

TEST_F(BatchJobControlTest, StopMidwayThenRerunFinishesEachRequestOnce) {
  BatchJobOptions o = options(16, 16);
  std::atomic<bool> stop{false};
  BatchCounters counters;
  o.stop = &stop;
  o.counters = &counters;
  o.max_in_flight = 6;
  std::thread stopper([&] {
    while (counters.completed.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop = true;
  });
  const BatchSummary first = run_batch_job(*engine_, *model_, o);
  stopper.join();
  ASSERT_TRUE(first.stopped);
  const size_t done_first = output_ids().size();
  EXPECT_LT(done_first, 17u);
  for (const auto& [id, n] : output_ids()) EXPECT_EQ(n, 1) << id;

  stop = false;
  const BatchSummary second = run_batch_job(*engine_, *model_, o);
  EXPECT_FALSE(second.stopped);
  EXPECT_EQ(second.skipped, done_first);
  const std::map<std::string, int> ids = output_ids();
  EXPECT_EQ(ids.size(), 17u);
  for (const auto& [id, n] : ids) EXPECT_EQ(n, 1) << id;
  EXPECT_EQ(counters.completed.load() + counters.failed.load(), 17u);
}

}  // namespace
}  // namespace db::batch

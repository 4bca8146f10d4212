// run_batch_job with a deadline (a batch's completion window): requests that finished
// keep their records, every other one gets a "batch_expired" error record, each
// custom_id exactly once, and a rerun after the deadline writes only what is missing.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "batch/batch_job.h"
#include "batch_api_test_util.h"
#include "bundle/model_bundle.h"
#include "default_model.h"
#include "engine/engine.h"

namespace db::batch {
namespace {

using nlohmann::json;
using SysClock = std::chrono::system_clock;

class BatchJobDeadlineTest : public test::DefaultModelSuite<ModelBundle> {
 protected:
  void SetUp() override {
    DefaultModelSuite::SetUp();
    if (HasFatalFailure()) return;
    engine_ = test::make_engine(*model_, 8);
  }

  // `short_n` requests of 2 tokens, then `long_n` of `long_tokens` that ignore EOS, then a bad line.
  BatchJobOptions options(int short_n, int long_n, int long_tokens, const json& extra = json::object()) {
    std::vector<json> bodies;
    for (int i = 0; i < short_n + long_n; ++i) {
      json body = {{"prompt", "Number " + std::to_string(i)}, {"temperature", 0},
                   {"max_tokens", i < short_n ? 2 : long_tokens}, {"ignore_eos", i >= short_n}};
      body.update(extra);
      bodies.push_back(std::move(body));
    }
    return test::completion_batch(dir_, *model_, bodies);
  }

  // custom_id -> the record's error code ("" for a success); fails on a custom_id seen twice.
  std::map<std::string, std::string> records() {
    std::map<std::string, std::string> out;
    std::ifstream in(dir_.file("out.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      const json r = json::parse(line);
      const std::string id = r["custom_id"].get<std::string>();
      EXPECT_EQ(out.count(id), 0u) << "two records for " << id;
      out[id] = r["error"].is_null() ? "" : r["error"]["code"].get<std::string>();
    }
    return out;
  }

  test::ScratchDir dir_{"batch_job_deadline"};
  std::unique_ptr<Engine> engine_;
};

TEST_F(BatchJobDeadlineTest, PassedDeadlineRunsNothingAndExpiresEveryRequest) {
  BatchJobOptions o = options(2, 2, 8);
  o.deadline = SysClock::now() - std::chrono::seconds(1);
  const BatchSummary s = run_batch_job(*engine_, *model_, o);
  EXPECT_EQ(s.ok, 0u);
  EXPECT_EQ(s.expired, 4u);
  EXPECT_EQ(s.failed, 5u);  // the bad line keeps its own error
  const auto r = records();
  ASSERT_EQ(r.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(r.at("r" + std::to_string(i)), kBatchExpiredCode);
  EXPECT_NE(r.at("bad"), kBatchExpiredCode);
  EXPECT_EQ(engine_->stats().generated_tokens, 0);
}

TEST_F(BatchJobDeadlineTest, DeadlineMidwayKeepsFinishedAndExpiresTheRest) {
  BatchJobOptions o = options(4, 12, 600);
  o.max_in_flight = 6;
  BatchCounters counters;
  o.counters = &counters;
  const auto started = SysClock::now();
  o.deadline = started + std::chrono::milliseconds(1500);
  const BatchSummary s = run_batch_job(*engine_, *model_, o);
  const double took = std::chrono::duration<double>(SysClock::now() - started).count();
  EXPECT_LT(took, 10.0) << "the job must end soon after its deadline";
  EXPECT_FALSE(s.stopped);
  const auto r = records();
  ASSERT_EQ(r.size(), 17u);
  size_t ok = 0, expired = 0;
  for (const auto& [id, code] : r) {
    if (code.empty()) ++ok;
    if (code == kBatchExpiredCode) ++expired;
  }
  EXPECT_GE(ok, 4u) << "the short requests finish well before the deadline";
  EXPECT_GE(expired, 1u) << "12 x 600 tokens cannot finish in 1.5 s";
  EXPECT_EQ(ok + expired + 1, 17u);
  EXPECT_EQ(s.expired, expired);
  EXPECT_EQ(counters.completed.load(), ok);
  EXPECT_EQ(counters.failed.load(), expired + 1);
  // A rerun (a restart after the deadline) finds every record written.
  const BatchSummary again = run_batch_job(*engine_, *model_, o);
  EXPECT_EQ(again.skipped, 17u);
  EXPECT_EQ(again.expired, 0u);
  EXPECT_EQ(records().size(), 17u);
}

// A request's own "timeout", shorter than the batch's deadline, ends it as a request
// timeout rather than an expiry (the engine enforces the deadline).
TEST_F(BatchJobDeadlineTest, OwnTimeoutIsARequestTimeout) {
  BatchJobOptions o = options(0, 2, 1000, {{"timeout", 0.2}});
  o.deadline = SysClock::now() + std::chrono::seconds(120);
  const auto started = SysClock::now();
  const BatchSummary s = run_batch_job(*engine_, *model_, o);
  EXPECT_LT(std::chrono::duration<double>(SysClock::now() - started).count(), 30.0);
  EXPECT_EQ(s.expired, 0u);
  const auto r = records();
  EXPECT_EQ(r.at("r0"), "request_timeout");
  EXPECT_EQ(r.at("r1"), "request_timeout");
}

}  // namespace
}  // namespace db::batch

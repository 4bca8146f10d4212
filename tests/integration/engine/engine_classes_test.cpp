// Service classes on the default model through the engine: deadlines and queue
// waits end requests with their own finish reasons and free every block,
// promotion serves a long-waiting background request ahead, and the pool and
// class counters reach the stats.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "engine_test_util.h"

namespace db::test {
namespace {

EngineConfig class_config(int max_seqs) {
  EngineConfig cfg;
  cfg.kv_cache_memory = kv_bytes_for_blocks(cfg, 512);
  cfg.max_num_seqs = max_seqs;
  return cfg;
}

EngineRequest long_request(int priority, double timeout = 0) {
  EngineRequest r = greedy_request(default_bundle()->encode_prompt("Count slowly: one, two, three,"), 2000);
  r.ignore_eos = true;
  r.priority = priority;
  r.timeout_seconds = timeout;
  return r;
}

TEST(EngineClasses, DeadlineEndsTheRequestWithTimeoutAndFreesItsBlocks) {
  ASSERT_NE(default_bundle(), nullptr);
  Engine engine(*default_bundle(), class_config(4));
  Collector c;
  const RequestId timed = engine.submit(long_request(1, /*timeout=*/0.3), c.callback());
  EngineRequest quick = greedy_request(default_bundle()->encode_prompt("Hello"), 4);
  const RequestId other = engine.submit(quick, c.callback());
  engine.wait_idle();
  const auto res = c.results();
  const RequestResult& r = res.at(timed);
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(r.samples[0].finish, FinishReason::Timeout);
  EXPECT_NE(r.samples[0].stop_reason.find("deadline of 0.3 s"), std::string::npos) << r.samples[0].stop_reason;
  EXPECT_LT(r.samples[0].tokens.size(), 2000u);
  EXPECT_GE(r.stats.e2e_seconds, 0.3);
  EXPECT_EQ(r.finals, 1);
  EXPECT_EQ(res.at(other).samples[0].finish, FinishReason::Length);
  const EngineStats s = engine.stats();
  EXPECT_EQ(s.timeouts, 1);
  EXPECT_EQ(s.free_blocks, s.num_blocks - 1);  // the pool is whole again
}

TEST(EngineClasses, QueueWaitPastTheLimitIsRejectedOrPromoted) {
  ASSERT_NE(default_bundle(), nullptr);
  for (const bool reject : {true, false}) {
    EngineConfig cfg = class_config(1);  // one runs at a time
    cfg.max_queue_wait = {0.0, 0.0, 0.2};
    cfg.reject_on_queue_timeout = reject;
    Engine engine(*default_bundle(), cfg);
    Collector c;
    const RequestId running = engine.submit(long_request(1, /*timeout=*/1.0), c.callback());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EngineRequest bg = greedy_request(default_bundle()->encode_prompt("Background job"), 30);
    bg.priority = 2;
    bg.ignore_eos = true;
    const RequestId background = engine.submit(bg, c.callback());
    EngineRequest normal = greedy_request(default_bundle()->encode_prompt("Normal job, arrived later"), 30);
    normal.ignore_eos = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // past the class-2 limit
    const RequestId later = engine.submit(normal, c.callback());
    engine.wait_idle();
    const auto res = c.results();
    EXPECT_EQ(res.at(running).samples[0].finish, FinishReason::Timeout);
    const EngineStats s = engine.stats();
    if (reject) {
      EXPECT_EQ(res.at(background).samples[0].finish, FinishReason::QueueTimeout);
      EXPECT_NE(res.at(background).samples[0].stop_reason.find("priority class 2"), std::string::npos);
      EXPECT_TRUE(res.at(background).samples[0].tokens.empty());
      EXPECT_EQ(s.queue_timeouts, 1);
    } else {
      // Promoted to class 1 before `later` arrived there, so it runs first
      // (`later` was submitted at least 0.4 s after it; each runs 30 tokens).
      EXPECT_EQ(res.at(background).samples[0].finish, FinishReason::Length);
      EXPECT_LT(res.at(background).stats.ttft_seconds, res.at(later).stats.ttft_seconds + 0.4);
      EXPECT_EQ(s.promotions, 1);
    }
    EXPECT_EQ(res.at(later).samples[0].finish, FinishReason::Length);
    EXPECT_EQ(s.free_blocks, s.num_blocks - 1);
  }
}

TEST(EngineClasses, PoolDiagnosticsReachTheStats) {
  ASSERT_NE(default_bundle(), nullptr);
  Engine engine(*default_bundle(), class_config(4));
  Collector c;
  for (int i = 0; i < 3; ++i)
    engine.submit(greedy_request(default_bundle()->encode_prompt("Tell me about boats " + std::to_string(i)), 8),
                  c.callback());
  engine.wait_idle();
  const EngineStats s = engine.stats();
  EXPECT_EQ(s.pool.num_usable_blocks, s.num_blocks - 1);
  EXPECT_EQ(s.pool.num_free_blocks, s.num_blocks - 1);
  EXPECT_EQ(s.pool.largest_free_run, s.num_blocks - 1);
  EXPECT_GT(s.resident_blocks, 0);
  EXPECT_EQ(s.pool.num_resident_blocks, s.resident_blocks);
  for (int p = 0; p < 3; ++p) EXPECT_EQ(s.blocks_by_priority[p], 0);
}

TEST(EngineClasses, StepObserverSeesEveryStepUntilRemoved) {
  ASSERT_NE(default_bundle(), nullptr);
  Engine engine(*default_bundle(), class_config(4));
  std::mutex mu;
  int64_t steps = 0, tokens = 0, sequences = 0;
  engine.set_step_observer([&](const StepRecord& r) {
    std::lock_guard<std::mutex> lock(mu);
    ++steps;
    tokens += r.tokens;
    sequences += r.sequences;
    EXPECT_GT(r.seconds, 0);
  });
  Collector c;
  for (int i = 0; i < 3; ++i)
    engine.submit(greedy_request(default_bundle()->encode_prompt("Ships and harbours " + std::to_string(i)), 6),
                  c.callback());
  engine.wait_idle();
  const EngineStats s = engine.stats();
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(steps, s.steps);
    // Every prompt token computed, plus one decode per generated token after each request's first.
    EXPECT_EQ(tokens, s.prompt_tokens + s.generated_tokens - 3);
    EXPECT_GE(sequences, steps);
  }
  engine.set_step_observer({});
  engine.submit(greedy_request(default_bundle()->encode_prompt("One more"), 3), c.callback());
  engine.wait_idle();
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(steps, s.steps);  // removed: not called again
}

}  // namespace
}  // namespace db::test

// Scripted steps of a long prompt beside short work (block size 4): the exact
// tokens each sequence computes in each step. With a long-prefill threshold of
// T, the shared threshold is T/8 rounded up to a block (4 for T = 8 and 16).
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "sched_test_util.h"

namespace db::test {
namespace {

using Chunks = std::map<RequestId, int32_t>;

// Sequence id -> tokens it computes in the step.
Chunks chunks_of(const SchedulerOutput& out) {
  Chunks c;
  for (const auto* list : {&out.scheduled_running, &out.scheduled_new})
    for (const ScheduledRequest& s : *list) c[s.id] = s.num_scheduled_tokens;
  return c;
}

// Output tokens of a live sequence; -1 when it is not live.
int32_t num_outputs(const Scheduler& s, RequestId id) {
  const Request* r = s.find(id);
  return r ? r->num_output_tokens() : -1;
}

// One step: schedules, runs the fake model, folds the samples back in; returns the chunks.
Chunks step(Scheduler& s) {
  const SchedulerOutput o = s.schedule();
  s.update(o, fake_run(s, o));
  return chunks_of(o);
}

TEST(SchedulerFairness, ShortPromptArrivingDuringALongPrefillRunsWholeInTheNextStep) {
  Scheduler s(tiny_config(8, /*budget=*/32, /*num_blocks=*/32, true, /*threshold=*/16));
  s.add_request(params(1, iota_tokens(1, 48), /*max_tokens=*/2));
  EXPECT_EQ(step(s), (Chunks{{1, 16}}));  // alone: a full threshold chunk

  s.add_request(params(2, iota_tokens(101, 3), /*max_tokens=*/3));
  EXPECT_EQ(step(s), (Chunks{{1, 4}, {2, 3}}));  // the whole short prompt; the long chunk shrinks
  EXPECT_EQ(num_outputs(s, 2), 1);
  EXPECT_EQ(step(s), (Chunks{{1, 4}, {2, 1}}));  // the decode gets its token
  EXPECT_EQ(step(s), (Chunks{{1, 4}, {2, 1}}));
  EXPECT_EQ(s.find(2), nullptr);  // 3 tokens: finished

  EXPECT_EQ(step(s), (Chunks{{1, 16}}));  // alone again
  EXPECT_EQ(step(s), (Chunks{{1, 4}}));   // its prompt's tail samples
  EXPECT_EQ(num_outputs(s, 1), 1);
}

TEST(SchedulerFairness, EveryRunningDecodeGetsItsTokenBesideLongPrompts) {
  Scheduler s(tiny_config(8, /*budget=*/12, /*num_blocks=*/64, true, /*threshold=*/8));
  s.add_request(params(1, iota_tokens(1, 40), /*max_tokens=*/1));
  s.add_request(params(2, iota_tokens(201, 40), /*max_tokens=*/1));
  EXPECT_EQ(step(s), (Chunks{{1, 8}, {2, 4}}));  // no short work: threshold chunks fill the budget

  s.add_request(params(3, iota_tokens(301, 2), /*max_tokens=*/8));
  s.add_request(params(4, iota_tokens(401, 2), /*max_tokens=*/8));
  EXPECT_EQ(step(s), (Chunks{{1, 4}, {2, 4}, {3, 2}, {4, 2}}));
  for (int k = 0; k < 5; ++k)  // ids 1 and 2 miss 28 and 32 tokens, then 24 and 28, ...
    EXPECT_EQ(step(s), (Chunks{{1, 4}, {2, 4}, {3, 1}, {4, 1}})) << "step " << k;
  EXPECT_EQ(num_outputs(s, 3), 6);
  EXPECT_EQ(num_outputs(s, 4), 6);
}

TEST(SchedulerFairness, LongPromptProgressesUnderAStreamOfShortPrompts) {
  Scheduler s(tiny_config(16, /*budget=*/10, /*num_blocks=*/64, true, /*threshold=*/8));
  s.add_request(params(1, iota_tokens(1, 40), /*max_tokens=*/1));
  EXPECT_EQ(step(s), (Chunks{{1, 8}}));
  RequestId next = 10;
  const auto arrive = [&](int count) {  // `count` 3-token prompts, one output token each
    for (int j = 0; j < count; ++j, ++next) s.add_request(params(next, iota_tokens(100 * int32_t(next), 3), 1));
  };
  arrive(4);
  // Four 3-token prompts per step, 12 tokens of a 10-token budget: two are
  // admitted per step in arrival order and the long prompt keeps one chunk.
  for (int k = 0; k < 7; ++k) {
    const RequestId a = 10 + RequestId(2 * k), b = a + 1;
    EXPECT_EQ(step(s), (Chunks{{1, 4}, {a, 3}, {b, 3}})) << "step " << k;
    arrive(4);
  }
  ASSERT_NE(s.find(1), nullptr);
  EXPECT_EQ(s.find(1)->num_computed_tokens, 36);
}

TEST(SchedulerFairness, ConfiguredSharedThresholdIsUsedUpToTheLongThreshold) {
  for (const auto& [configured, used] : {std::pair{8, 8}, std::pair{32, 16}}) {
    SchedulerConfig c = tiny_config(8, /*budget=*/32, /*num_blocks=*/32, true, /*threshold=*/16);
    c.shared_prefill_threshold = configured;
    Scheduler s(c);
    s.add_request(params(1, iota_tokens(1, 48), /*max_tokens=*/2));
    EXPECT_EQ(step(s), (Chunks{{1, 16}}));
    s.add_request(params(2, iota_tokens(101, 3), /*max_tokens=*/3));
    EXPECT_EQ(step(s), (Chunks{{1, used}, {2, 3}})) << "configured " << configured;
  }
}

}  // namespace
}  // namespace db::test

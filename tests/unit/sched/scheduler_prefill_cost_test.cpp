// The scheduler sizes a long prompt's chunks by cost: beside running decodes,
// chunks deep in the prompt hold fewer tokens, none costs more than a shared
// chunk at position 0 (but by the one-token minimum), and every decode gets its
// token in every step.
#include <gtest/gtest.h>

#include "sched_test_util.h"

namespace db::test {
namespace {

SchedulerConfig long_prompt_config(double rate) {
  SchedulerConfig c;
  c.max_num_seqs = 8;
  c.max_num_batched_tokens = 2048;
  c.long_prefill_threshold = 512;  // shared threshold: auto, 64
  c.block_size = 16;
  c.num_blocks = 1024;
  c.max_model_len = 16000;
  c.prefill_cost = PrefillCost{rate};
  return c;
}

struct LongPromptTrace {
  std::vector<std::pair<int32_t, int32_t>> chunks;  // (position, tokens) of the long prompt's steps
  int32_t steps = 0;
};

// Runs an 8000-token prompt beside two decoding requests until its prefill is
// done, checking every step: each decode is scheduled, and the long chunk's cost
// is within a shared chunk's at position 0 (or it is one token).
LongPromptTrace run_long_prompt_beside_decodes(double rate) {
  Scheduler s(long_prompt_config(rate));
  const PrefillCost cost{rate};
  s.add_request(params(1, iota_tokens(100, 16), /*max_tokens=*/4000));
  s.add_request(params(2, iota_tokens(200, 16), /*max_tokens=*/4000));
  SchedulerOutput o = s.schedule();  // both prompts at once
  s.update(o, fake_run(s, o));
  s.add_request(params(3, iota_tokens(1000, 8000), /*max_tokens=*/2));
  LongPromptTrace t;
  for (;;) {
    o = s.schedule();
    EXPECT_TRUE(scheduled(o, 1) && entry(o, 1).num_scheduled_tokens == 1) << "step " << t.steps;
    EXPECT_TRUE(scheduled(o, 2) && entry(o, 2).num_scheduled_tokens == 1) << "step " << t.steps;
    if (scheduled(o, 3)) {
      const ScheduledRequest& c = entry(o, 3);
      EXPECT_TRUE(cost.cost(c.num_computed_tokens, c.num_scheduled_tokens) <= cost.cost(0, 64) ||
                  c.num_scheduled_tokens == 1)
          << "chunk of " << c.num_scheduled_tokens << " at " << c.num_computed_tokens;
      t.chunks.emplace_back(c.num_computed_tokens, c.num_scheduled_tokens);
    }
    ++t.steps;
    const bool prefilled = scheduled(o, 3) && entry(o, 3).num_samples == 1;
    s.update(o, fake_run(s, o));
    if (prefilled || t.steps > 5000) break;
  }
  return t;
}

TEST(SchedulerPrefillCost, ChunksDeepInALongPromptAreShorterAndDecodesRunEveryStep) {
  const LongPromptTrace t = run_long_prompt_beside_decodes(1.5e-3);
  ASSERT_FALSE(t.chunks.empty());
  int32_t total = 0;
  for (const auto& [p, n] : t.chunks) total += n;
  EXPECT_EQ(total, 8000);  // the whole prompt, in order
  EXPECT_EQ(t.chunks.front(), std::make_pair(0, 64));
  const auto at = [&](int32_t position) {
    for (const auto& [p, n] : t.chunks)
      if (p >= position) return n;
    return 0;
  };
  EXPECT_LT(at(7000), at(1000));
  EXPECT_LT(at(1000), 64);
  EXPECT_GE(at(7000), 1);
}

TEST(SchedulerPrefillCost, PricingTokensKeepsChunksCapSized) {
  const LongPromptTrace t = run_long_prompt_beside_decodes(0);
  for (size_t i = 0; i + 1 < t.chunks.size(); ++i) EXPECT_EQ(t.chunks[i].second, 64);
  EXPECT_EQ(t.chunks.size(), 125u);
}

TEST(SchedulerPrefillCost, ADeepChunkAloneCostsNoMoreThanAFullChunkAtTheStart) {
  Scheduler s(long_prompt_config(1.5e-3));
  const PrefillCost cost{1.5e-3};
  s.add_request(params(1, iota_tokens(1000, 8000), /*max_tokens=*/1));
  std::vector<int32_t> sizes;
  for (int step = 0; step < 1000 && s.has_unfinished(); ++step) {
    const SchedulerOutput o = s.schedule();
    const ScheduledRequest& c = entry(o, 1);
    EXPECT_LE(cost.cost(c.num_computed_tokens, c.num_scheduled_tokens), cost.cost(0, 512));
    sizes.push_back(c.num_scheduled_tokens);
    s.update(o, fake_run(s, o));
  }
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(sizes.front(), 512);
  EXPECT_LT(sizes.back(), sizes.front() / 4);
  s.set_prefill_cost(PrefillCost{});  // back to tokens: the next prompt's chunks are cap-sized
  s.add_request(params(2, iota_tokens(20000, 2000), /*max_tokens=*/1));
  SchedulerOutput o = s.schedule();
  s.update(o, fake_run(s, o));
  o = s.schedule();
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 512);
}

}  // namespace
}  // namespace db::test

// n > 1 samples: one sequence until the prompt is computed, then n sequences
// sharing its blocks copy-on-write (block size 4).
#include <gtest/gtest.h>

#include "sched_test_util.h"

namespace db::test {
namespace {

TEST(SchedulerFork, ParentForksAfterItsPromptAndChildrenCopyTheSharedPartialBlock) {
  Scheduler s(tiny_config(8, 64, 16));
  s.add_request(params(1, iota_tokens(1, 6), /*max_tokens=*/3, 1, /*n=*/3));
  EXPECT_EQ(s.num_running_seqs(), 0);

  SchedulerOutput o = s.schedule();
  ASSERT_EQ(ids_of(o.scheduled_new), (Ids{1}));
  EXPECT_EQ(entry(o, 1).num_samples, 3);
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2}));
  EXPECT_EQ(s.num_running_seqs(), 3);
  auto outs = s.update(o, fake_run(s, o));
  ASSERT_EQ(outs.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(outs[k].id, 1u + k);
    EXPECT_EQ(outs[k].group_id, 1u);
    EXPECT_EQ(outs[k].sample_index, k);
    EXPECT_EQ(outs[k].new_tokens[0].token, fake_token(1, 0, k));
  }
  EXPECT_EQ(s.running_ids(), (Ids{1, 2, 3}));
  EXPECT_EQ(s.find(3)->sampler_state.stream, 2u);
  EXPECT_EQ(s.find(3)->sampler_state.seed, 7u);
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 13);  // the prompt's 2 blocks, shared

  o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1}));
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{2, 3}));
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 3}));
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{1, 4}));
  EXPECT_EQ(entry(o, 3).block_ids, (Blocks{1, 2}));  // the last holder writes in place
  EXPECT_EQ(o.block_copies, (std::vector<BlockCopy>{{2, 3}, {2, 4}}));
  const NewRequestData& child = *entry(o, 3).new_data;
  std::vector<int32_t> expected = iota_tokens(1, 6);
  expected.push_back(fake_token(1, 0, 2));
  EXPECT_EQ(child.tokens, expected);
  EXPECT_EQ(child.sampler_state.stream, 2u);
  EXPECT_FALSE(child.first_admission);
  EXPECT_EQ(entry(o, 3).num_computed_tokens, 6);
  EXPECT_EQ(entry(o, 3).num_scheduled_tokens, 1);
  s.update(o, fake_run(s, o));

  o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1, 2, 3}));
  EXPECT_TRUE(o.block_copies.empty());
  outs = s.update(o, fake_run(s, o));
  ASSERT_EQ(outs.size(), 3u);
  for (const auto& out : outs) EXPECT_EQ(out.status, RequestStatus::FinishedLength);
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 15);
}

TEST(SchedulerFork, UnforkedParentReservesItsSequenceSlots) {
  Scheduler s(tiny_config(/*max_seqs=*/4, 64, 16));
  s.add_request(params(1, iota_tokens(1, 6), 3, 1, /*n=*/3));
  s.add_request(params(4, iota_tokens(11, 6)));
  s.add_request(params(5, iota_tokens(21, 6)));
  const SchedulerOutput o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1, 4}));
  EXPECT_EQ(s.waiting_ids(), (Ids{5}));
}

TEST(SchedulerFork, SingleTokenSamplesFinishRightAfterTheFork) {
  Scheduler s(tiny_config(8, 64, 16));
  s.add_request(params(1, iota_tokens(1, 6), /*max_tokens=*/1, 1, /*n=*/2));
  const SchedulerOutput o = s.schedule();
  const auto outs = s.update(o, fake_run(s, o));
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedLength);
  EXPECT_EQ(outs[1].status, RequestStatus::FinishedLength);
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 15);
}

TEST(SchedulerFork, AbortingAnUnforkedParentEndsTheWholeGroup) {
  Scheduler s(tiny_config(8, /*budget=*/4, 16));
  s.add_request(params(1, iota_tokens(1, 6), 3, 1, /*n=*/2));
  const SchedulerOutput o = s.schedule();
  s.update(o, fake_run(s, o));
  const RequestId ids[] = {1, 2};
  EXPECT_EQ(s.finish_requests(ids, RequestStatus::FinishedAborted), (Ids{1}));
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 15);
}

}  // namespace
}  // namespace db::test

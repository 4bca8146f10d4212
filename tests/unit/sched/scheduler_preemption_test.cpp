// Preemption by recompute under the first-chunk admission rule: which sequence is
// preempted, where it goes, and how it resumes with its output kept (block size 4,
// 7 usable blocks). scheduler_admission_test.cpp covers the Reserve rule.
#include <gtest/gtest.h>

#include "sched_test_util.h"

namespace db::test {
namespace {

std::vector<int32_t> output_of(const Scheduler& s, RequestId id) {
  const Request* r = s.find(id);
  return r ? std::vector<int32_t>(r->output().begin(), r->output().end()) : std::vector<int32_t>{};
}

TEST(SchedulerPreemption, LeastUrgentRunningSequenceIsPreemptedAndResumesWithItsOutput) {
  Scheduler s(first_chunk_config());
  s.add_request(params(1, iota_tokens(1, 8), /*max_tokens=*/4, /*priority=*/2));
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2}));
  s.update(o, fake_run(s, o));

  s.add_request(params(2, iota_tokens(11, 8), 3, /*priority=*/0));
  s.add_request(params(3, iota_tokens(21, 8), 3, /*priority=*/1));
  o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2, 3}));
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{4, 5}));
  EXPECT_EQ(entry(o, 3).block_ids, (Blocks{6, 7}));
  EXPECT_EQ(s.running_ids(), (Ids{2, 3, 1}));  // service order: class 0, 1, 2
  s.update(o, fake_run(s, o));
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 0);

  // 2 and 3 each need a third block: 1 (class 2, though the oldest) gives up its blocks.
  o = s.schedule();
  EXPECT_EQ(o.preempted_ids, (Ids{1}));
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{2, 3}));
  EXPECT_TRUE(o.scheduled_new.empty());
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{4, 5, 3}));  // 1's blocks were freed tail first: 3, 2, 1
  EXPECT_EQ(entry(o, 2).new_block_ids, (Blocks{3}));
  EXPECT_EQ(entry(o, 3).block_ids, (Blocks{6, 7, 2}));
  const Request* preempted = s.find(1);
  EXPECT_EQ(preempted->status, RequestStatus::Preempted);
  EXPECT_EQ(preempted->num_computed_tokens, 0);
  EXPECT_EQ(output_of(s, 1), (std::vector<int32_t>{1010, 1011}));
  EXPECT_EQ(s.waiting_ids(), (Ids{1}));
  EXPECT_EQ(s.counters().preemptions, 1);
  s.update(o, fake_run(s, o));

  // Only block 1 is free (cached, holds 1's first 4 tokens): 1 needs 3 blocks and waits.
  o = s.schedule();
  EXPECT_TRUE(o.preempted_ids.empty());
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{2, 3}));
  EXPECT_TRUE(o.scheduled_new.empty());
  const auto outs = s.update(o, fake_run(s, o));  // 2 and 3 reach max_tokens
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedLength);
  EXPECT_EQ(outs[1].status, RequestStatus::FinishedLength);

  // 1 resumes: its first block is a prefix-cache hit, the rest (prompt tail and
  // the first output token) is recomputed, and the chunk samples output 2.
  o = s.schedule();
  EXPECT_EQ(o.finished_ids, (Ids{2, 3}));
  ASSERT_EQ(ids_of(o.scheduled_new), (Ids{1}));
  const ScheduledRequest& resumed = entry(o, 1);
  EXPECT_EQ(resumed.num_computed_tokens, 4);
  EXPECT_EQ(resumed.num_scheduled_tokens, 6);
  EXPECT_EQ(resumed.num_samples, 1);
  EXPECT_EQ(resumed.block_ids, (Blocks{1, 3, 5}));
  EXPECT_EQ(resumed.new_block_ids, (Blocks{3, 5}));
  ASSERT_TRUE(resumed.new_data);
  EXPECT_FALSE(resumed.new_data->first_admission);
  EXPECT_EQ(resumed.new_data->num_cached_tokens, 4);
  EXPECT_EQ(resumed.new_data->tokens.size(), 10u);
  s.update(o, fake_run(s, o));
  o = s.schedule();
  s.update(o, fake_run(s, o));
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 7);
  EXPECT_EQ(s.counters().prompt_tokens_computed, 8 + 8 + 8 + 4);
  EXPECT_EQ(s.counters().output_tokens_recomputed, 1);
  EXPECT_EQ(s.counters().generated_tokens, 4 + 3 + 3);
}

TEST(SchedulerPreemption, OutputContinuesAcrossPreemption) {
  Scheduler s(first_chunk_config());
  s.add_request(params(1, iota_tokens(1, 8), 4, 2));
  s.add_request(params(2, iota_tokens(11, 8), 3, 0));
  s.add_request(params(3, iota_tokens(21, 8), 3, 1));
  std::vector<int32_t> tokens_of_1;
  int preemptions_seen = 0;
  for (int step = 0; step < 20 && s.has_unfinished(); ++step) {
    const SchedulerOutput o = s.schedule();
    preemptions_seen += static_cast<int>(o.preempted_ids.size());
    for (const RequestOutput& out : s.update(o, fake_run(s, o)))
      if (out.id == 1) tokens_of_1.push_back(out.new_tokens[0].token);
  }
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(tokens_of_1, (std::vector<int32_t>{1010, 1011, 1012, 1013}));
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 7);
}

TEST(SchedulerPreemption, SequenceThatRunsLastAndCannotGrowPreemptsItself) {
  Scheduler s(first_chunk_config());
  s.add_request(params(1, iota_tokens(1, 11)));
  s.add_request(params(2, iota_tokens(21, 16)));
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2, 3}));
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{4, 5, 6, 7}));
  s.update(o, fake_run(s, o));

  o = s.schedule();  // 1 fits in its blocks; 2 needs a fifth block and is the victim itself
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1}));
  EXPECT_EQ(o.preempted_ids, (Ids{2}));
  EXPECT_EQ(o.total_num_scheduled_tokens, 1);
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));
  EXPECT_EQ(s.find(2)->num_tokens(), 17);
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 4);
}

TEST(SchedulerPreemption, PreemptedRequestGoesBackInFrontOfLaterArrivals) {
  Scheduler s(first_chunk_config());
  s.add_request(params(1, iota_tokens(1, 11)));
  s.add_request(params(2, iota_tokens(21, 16)));
  SchedulerOutput o = s.schedule();
  s.update(o, fake_run(s, o));
  s.add_request(params(3, iota_tokens(41, 2)));  // arrives before the preemption
  o = s.schedule();
  EXPECT_EQ(o.preempted_ids, (Ids{2}));
  EXPECT_TRUE(o.scheduled_new.empty());  // no admission in a step that preempted
  EXPECT_EQ(s.waiting_ids(), (Ids{2, 3}));
}

TEST(SchedulerPreemption, MoreUrgentWaitingRequestPreemptsALessUrgentOneForBlocks) {
  Scheduler s(first_chunk_config());
  s.add_request(params(1, iota_tokens(1, 12), 4, /*priority=*/2));
  s.add_request(params(2, iota_tokens(21, 12), 4, /*priority=*/2));
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2, 3}));
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{4, 5, 6}));
  s.update(o, fake_run(s, o));

  s.add_request(params(3, iota_tokens(41, 8), 4, /*priority=*/0));  // needs 2 blocks, 1 is free
  o = s.schedule();
  EXPECT_EQ(o.preempted_ids, (Ids{2}));
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1}));
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{3}));
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2, 3, 7}));
  EXPECT_EQ(entry(o, 3).block_ids, (Blocks{6, 5}));  // 2's blocks were freed tail first
  EXPECT_EQ(s.running_ids(), (Ids{3, 1}));
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));
}

TEST(SchedulerPreemption, MoreUrgentWaitingRequestPreemptsForASequenceSlot) {
  for (int waiting_priority : {0, 2}) {
    Scheduler s(first_chunk_config(/*max_seqs=*/2, 64, 16));
    s.add_request(params(1, iota_tokens(1, 4), 4, /*priority=*/1));
    s.add_request(params(2, iota_tokens(11, 4), 4, /*priority=*/2));
    SchedulerOutput o = s.schedule();
    s.update(o, fake_run(s, o));
    s.add_request(params(3, iota_tokens(21, 4), 4, waiting_priority));
    o = s.schedule();
    if (waiting_priority == 0) {
      EXPECT_EQ(o.preempted_ids, (Ids{2}));
      EXPECT_EQ(ids_of(o.scheduled_new), (Ids{3}));
      EXPECT_EQ(s.waiting_ids(), (Ids{2}));
    } else {  // the same class waits its turn
      EXPECT_TRUE(o.preempted_ids.empty());
      EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1, 2}));
      EXPECT_EQ(s.waiting_ids(), (Ids{3}));
    }
  }
}

TEST(SchedulerPreemption, PriorityPreemptionCanBeTurnedOff) {
  SchedulerConfig c = first_chunk_config(/*max_seqs=*/1, 64, 16);
  c.priority_preemption = false;
  Scheduler s(c);
  s.add_request(params(1, iota_tokens(1, 4), 4, 2));
  SchedulerOutput o = s.schedule();
  s.update(o, fake_run(s, o));
  s.add_request(params(2, iota_tokens(11, 4), 4, 0));
  o = s.schedule();
  EXPECT_TRUE(o.preempted_ids.empty());
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));
}

}  // namespace
}  // namespace db::test

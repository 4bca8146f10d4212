// Service classes under pressure: KV watermarks at admission and growth, class
// preemption out of slots and out of blocks, queue-wait promotion and rejection,
// deadlines, tenants taking turns, and the memory guard's limits
// (block size 4; tiny_config's pools, under the first-chunk admission rule, whose
// preemptions these scripts follow block by block).
#include <gtest/gtest.h>

#include "sched_test_util.h"

namespace db::test {
namespace {

RequestParams timed(RequestId id, int32_t prompt_len, int priority, double arrival, double deadline = 0,
                    std::string tenant = "") {
  RequestParams p = params(id, iota_tokens(int32_t(id) * 100, prompt_len), /*max_tokens=*/8, priority);
  p.arrival_time = arrival;
  p.deadline = deadline;
  p.tenant = std::move(tenant);
  return p;
}

void step_once(Scheduler& s) {
  SchedulerOutput o = s.schedule();
  s.update(o, fake_run(s, o));
}

TEST(SchedulerClasses, WatermarkKeepsALessUrgentAdmissionOutOfTheReserve) {
  SchedulerConfig c = first_chunk_config(/*max_seqs=*/8, /*budget=*/64, /*num_blocks=*/11);
  c.kv_watermarks = {0.0, 0.0, 0.3};  // class 2 must leave 3 of the 10 usable blocks
  Scheduler s(c);
  EXPECT_EQ(s.reserve_blocks(2), 3);
  EXPECT_EQ(s.reserve_blocks(0), 0);
  s.add_request(timed(1, 8, /*priority=*/1, 0));  // 2 blocks
  step_once(s);
  s.add_request(timed(2, 24, /*priority=*/2, 0));  // 6 blocks: 8 allocatable - 6 < 3
  SchedulerOutput o = s.schedule();
  EXPECT_FALSE(scheduled(o, 2));
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));
  s.update(o, fake_run(s, o));
  // The same prompt at class 0 may take the pool down to nothing reserved.
  s.finish_requests(Ids{2}, RequestStatus::FinishedAborted);
  s.add_request(timed(3, 24, /*priority=*/0, 0));
  o = s.schedule();
  EXPECT_TRUE(scheduled(o, 3));
}

TEST(SchedulerClasses, AloneALessUrgentSequenceMayUseTheReserve) {
  SchedulerConfig c = first_chunk_config(8, 64, 11);
  c.kv_watermarks = {0.0, 0.0, 0.3};
  Scheduler s(c);
  s.add_request(timed(1, 36, /*priority=*/2, 0));  // 9 of 10 blocks, nothing else runs
  SchedulerOutput o = s.schedule();
  EXPECT_TRUE(scheduled(o, 1));
}

TEST(SchedulerClasses, GrowthIntoTheReservePreemptsTheLeastUrgentSequence) {
  SchedulerConfig c = first_chunk_config(8, 64, 11);
  c.kv_watermarks = {0.0, 0.0, 0.2};  // class 2 must leave 2 blocks
  Scheduler s(c);
  s.add_request(timed(1, 16, /*priority=*/1, 0));  // 4 blocks, full: grows at its first output
  s.add_request(timed(2, 15, /*priority=*/2, 0));  // 4 blocks, one slot left in the last
  step_once(s);
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 2);
  // 1 (class 1) may take block 9; 2 fills its last slot; then 2 needs a block
  // and would leave fewer than 2: it runs last, so it is preempted.
  step_once(s);
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 1);
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(o.preempted_ids, (Ids{2}));
  EXPECT_EQ(s.find(2)->status, RequestStatus::Preempted);
  EXPECT_EQ(s.find(2)->num_output_tokens(), 2);  // its output is kept
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));
}

TEST(SchedulerClasses, UrgentRequestPreemptsTheNewestLeastUrgentOutOfSlots) {
  Scheduler s(first_chunk_config(/*max_seqs=*/2, 64, 20));
  s.add_request(timed(1, 4, /*priority=*/2, 0));
  s.add_request(timed(2, 4, /*priority=*/2, 0));
  step_once(s);
  s.add_request(timed(3, 4, /*priority=*/0, 0));
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(o.preempted_ids, (Ids{2}));  // the most recently admitted of the least urgent class
  EXPECT_TRUE(scheduled(o, 3));
  EXPECT_EQ(s.running_ids(), (Ids{3, 1}));
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));
  EXPECT_EQ(s.find(2)->num_output_tokens(), 1);
}

TEST(SchedulerClasses, UrgentRequestPreemptsTheNewestLeastUrgentOutOfBlocks) {
  Scheduler s(first_chunk_config(/*max_seqs=*/8, 64, /*num_blocks=*/7));  // 6 usable
  s.add_request(timed(1, 8, /*priority=*/2, 0));
  s.add_request(timed(2, 8, /*priority=*/1, 0));
  s.add_request(timed(3, 8, /*priority=*/2, 0));
  step_once(s);
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 0);
  s.add_request(timed(4, 8, /*priority=*/0, 0));
  // Each step the newest class-2 sequence gives way until 4 fits (the running
  // ones may take freed blocks first); the class-1 sequence is never touched.
  std::vector<RequestId> preempted;
  bool admitted = false;
  for (int i = 0; i < 4 && !admitted; ++i) {
    SchedulerOutput o = s.schedule();
    preempted.insert(preempted.end(), o.preempted_ids.begin(), o.preempted_ids.end());
    admitted = scheduled(o, 4);
    s.update(o, fake_run(s, o));
  }
  EXPECT_TRUE(admitted);
  EXPECT_EQ(preempted, (Ids{3, 1}));
  EXPECT_EQ(s.find(2)->status, RequestStatus::Running);
}

TEST(SchedulerClasses, QueueWaitPastTheLimitPromotesOneClass) {
  SchedulerConfig c = first_chunk_config(/*max_seqs=*/1, 64, 20);
  c.max_queue_wait = {0.0, 0.0, 5.0};
  Scheduler s(c);
  s.add_request(timed(1, 4, /*priority=*/1, 0));
  s.add_request(timed(2, 4, /*priority=*/2, 0));
  s.add_request(timed(3, 4, /*priority=*/1, 1));
  step_once(s);
  EXPECT_EQ(s.waiting_ids(), (Ids{3, 2}));
  EXPECT_TRUE(s.enforce_time_limits(4.9).empty());
  EXPECT_EQ(s.find(2)->priority, 2);
  EXPECT_TRUE(s.enforce_time_limits(5.0).empty());
  EXPECT_EQ(s.find(2)->priority, 1);
  EXPECT_EQ(s.find(2)->requested_priority, 2);
  EXPECT_EQ(s.counters().promotions, 1);
  EXPECT_EQ(s.waiting_ids(), (Ids{3, 2}));  // now in class 1, behind the one queued there before
  s.enforce_time_limits(100);               // class 1 has no limit: it stays
  EXPECT_EQ(s.find(2)->priority, 1);
}

TEST(SchedulerClasses, QueueWaitPastTheLimitRejectsWhenConfigured) {
  SchedulerConfig c = first_chunk_config(/*max_seqs=*/1, 64, 20);
  c.max_queue_wait = {0.0, 0.0, 5.0};
  c.reject_on_queue_timeout = true;
  Scheduler s(c);
  s.add_request(timed(1, 4, /*priority=*/2, 0));
  s.add_request(timed(2, 4, /*priority=*/2, 0));
  step_once(s);  // 1 runs; 2 waits
  const std::vector<EndedRequest> ended = s.enforce_time_limits(6);
  ASSERT_EQ(ended.size(), 1u);  // 1 runs, so its wait is over
  EXPECT_EQ(ended[0].group_id, 2u);
  EXPECT_EQ(ended[0].status, RequestStatus::FinishedQueueTimeout);
  EXPECT_NE(ended[0].message.find("priority class 2"), std::string::npos);
  EXPECT_EQ(s.find(2), nullptr);
  EXPECT_EQ(s.counters().queue_timeouts, 1);
}

TEST(SchedulerClasses, DeadlineEndsRunningAndWaitingRequestsAndFreesEveryBlock) {
  Scheduler s(first_chunk_config(/*max_seqs=*/1, 64, 20));
  s.add_request(timed(1, 10, 1, /*arrival=*/0, /*deadline=*/2));
  s.add_request(timed(2, 10, 1, 0, /*deadline=*/3));
  step_once(s);
  step_once(s);
  EXPECT_GT(s.kv_cache().num_free_blocks(), 0);
  EXPECT_LT(s.kv_cache().num_free_blocks(), 19);
  EXPECT_TRUE(s.enforce_time_limits(1.9).empty());
  std::vector<EndedRequest> ended = s.enforce_time_limits(2.0);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].group_id, 1u);
  EXPECT_EQ(ended[0].status, RequestStatus::FinishedTimeout);
  EXPECT_NE(ended[0].message.find("deadline of 2 s"), std::string::npos);
  ended = s.enforce_time_limits(3.0);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].group_id, 2u);
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 19);  // the whole pool is free again
  EXPECT_EQ(s.schedule().finished_ids, (Ids{1}));  // the runner forgets the one it knew
  EXPECT_EQ(s.counters().timeouts, 2);
}

TEST(SchedulerClasses, DeadlineEndsTheForksOfARequestWhoseFirstSampleStopped) {
  Scheduler s(first_chunk_config(/*max_seqs=*/4, 64, 20));
  RequestParams p = timed(1, 6, 1, /*arrival=*/0, /*deadline=*/2);
  p.num_samples = 2;
  s.add_request(p);
  step_once(s);  // the prompt, then the fork into sequences 1 and 2
  ASSERT_NE(s.find(2), nullptr);
  const RequestId first[] = {1};
  s.finish_requests(first, RequestStatus::FinishedStopped);  // sample 0 matched a stop string
  step_once(s);
  EXPECT_TRUE(s.enforce_time_limits(1.0).empty());
  const std::vector<EndedRequest> ended = s.enforce_time_limits(2.5);
  ASSERT_EQ(ended.size(), 1u) << "the other sample keeps the request's deadline";
  EXPECT_EQ(ended[0].group_id, 1u);
  EXPECT_FALSE(s.has_unfinished());
}

TEST(SchedulerClasses, TenantsOfOneClassTakeTurns) {
  Scheduler s(first_chunk_config(/*max_seqs=*/1, 64, 40));
  s.add_request(timed(1, 4, 1, 0, 0, "noisy"));
  s.add_request(timed(2, 4, 1, 0, 0, "noisy"));
  s.add_request(timed(3, 4, 1, 0, 0, "noisy"));
  s.add_request(timed(4, 4, 1, 0, 0, "quiet"));
  s.add_request(timed(5, 4, 0, 0, 0, "noisy"));
  EXPECT_EQ(s.waiting_ids(), (Ids{5, 1, 4, 2, 3}));
  std::vector<RequestId> admitted;
  while (s.has_unfinished()) {
    SchedulerOutput o = s.schedule();
    for (const ScheduledRequest& r : o.scheduled_new) admitted.push_back(r.id);
    s.update(o, fake_run(s, o));
  }
  EXPECT_EQ(admitted, (Ids{5, 1, 4, 2, 3}));
}

TEST(SchedulerClasses, MemoryCapPreemptsTheLeastUrgentAndPausesAdmission) {
  Scheduler s(first_chunk_config(/*max_seqs=*/8, 64, 40));
  for (RequestId id = 1; id <= 4; ++id) s.add_request(timed(id, 4, id <= 2 ? 0 : 2, 0));
  step_once(s);
  EXPECT_EQ(s.num_running(), 4);
  s.add_request(timed(5, 4, 0, 0));
  s.set_memory_limits({/*max_running=*/2, /*admission_paused=*/true, /*fresh_blocks=*/-1});
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(o.preempted_ids, (Ids{4, 3}));
  EXPECT_FALSE(scheduled(o, 5));  // admission paused while anything runs
  EXPECT_EQ(s.running_ids(), (Ids{1, 2}));
  s.update(o, fake_run(s, o));
  s.set_memory_limits({2, false, -1});
  o = s.schedule();
  EXPECT_FALSE(scheduled(o, 5));  // open, but the cap is reached
  s.update(o, fake_run(s, o));
  s.set_memory_limits({0, false, -1});  // back to the configured maximum
  o = s.schedule();
  EXPECT_TRUE(scheduled(o, 5));
}

TEST(SchedulerClasses, ALoneRequestRunsWhateverTheMemoryLimits) {
  Scheduler s(first_chunk_config(8, 64, 40));
  s.set_memory_limits({1, true, 0});
  s.add_request(params(1, iota_tokens(1, 4), 4, 1, /*n=*/3));  // 3 samples > cap 1
  SchedulerOutput o = s.schedule();
  EXPECT_TRUE(scheduled(o, 1));
}

TEST(SchedulerClasses, ResidentOnlyReusesUsedBlocksAndLeavesFreshOnesUntouched) {
  Scheduler s(first_chunk_config(/*max_seqs=*/8, 64, /*num_blocks=*/20, /*caching=*/false));
  s.add_request(timed(1, 16, 1, 0));  // 4 blocks: 1-4
  s.add_request(timed(2, 2, 1, 0));   // block 5 (room to decode)
  s.add_request(timed(5, 2, 1, 0));   // block 6
  step_once(s);
  s.finish_requests(Ids{1}, RequestStatus::FinishedAborted);  // 1-4 free, resident
  EXPECT_EQ(s.kv_cache().pool().num_resident_blocks(), 6);
  s.set_memory_limits({0, false, /*fresh_blocks=*/0});
  s.add_request(timed(3, 12, 1, 0));  // 3 blocks: from the used ones
  SchedulerOutput o = s.schedule();
  ASSERT_TRUE(scheduled(o, 3));
  for (int32_t b : entry(o, 3).block_ids) EXPECT_LE(b, 4);
  EXPECT_EQ(s.kv_cache().pool().num_resident_blocks(), 6);
  s.update(o, fake_run(s, o));
  s.add_request(timed(4, 12, 1, 0));  // needs 3; 3's first output takes the last used block: waits
  o = s.schedule();
  EXPECT_FALSE(scheduled(o, 4));
  s.update(o, fake_run(s, o));
  s.set_memory_limits({0, false, -1});
  o = s.schedule();
  EXPECT_TRUE(scheduled(o, 4));
  EXPECT_GT(s.kv_cache().pool().num_resident_blocks(), 6);
}

TEST(SchedulerClasses, ALoneSequenceMayPassTheBoundOnNewKVMemory) {
  Scheduler s(first_chunk_config(/*max_seqs=*/8, 64, /*num_blocks=*/20, /*caching=*/false));
  s.set_memory_limits({0, false, /*fresh_blocks=*/0});
  s.add_request(timed(1, 12, 1, 0));  // alone: takes 3 never-used blocks
  SchedulerOutput o = s.schedule();
  ASSERT_TRUE(scheduled(o, 1));
  s.update(o, fake_run(s, o));
  s.add_request(timed(2, 4, 1, 0));  // not alone: no used block is free, so it waits
  o = s.schedule();
  EXPECT_FALSE(scheduled(o, 2));
  EXPECT_EQ(s.kv_cache().pool().num_resident_blocks(), 4);  // 1 grew alone for its first output
}

TEST(SchedulerClasses, InteractiveStepsCapLessUrgentTokensAndRotateThem) {
  SchedulerConfig c = first_chunk_config(/*max_seqs=*/8, 64, 60);
  c.interactive_step_tokens = 2;
  Scheduler s(c);
  for (RequestId id = 1; id <= 4; ++id) s.add_request(timed(id, 3, /*priority=*/2, 0));
  step_once(s);  // no class-0 work: all four run
  s.add_request(timed(9, 3, /*priority=*/0, 0));
  std::vector<Ids> lower;
  for (int i = 0; i < 3; ++i) {
    SchedulerOutput o = s.schedule();
    EXPECT_TRUE(scheduled(o, 9));
    Ids ids;
    for (RequestId id = 1; id <= 4; ++id)
      if (scheduled(o, id)) ids.push_back(id);
    lower.push_back(ids);
    s.update(o, fake_run(s, o));
  }
  // Two decode tokens per interactive step, the longest-waiting first.
  EXPECT_EQ(lower, (std::vector<Ids>{{1, 2}, {3, 4}, {1, 2}}));
  s.finish_requests(Ids{9}, RequestStatus::FinishedAborted);
  SchedulerOutput o = s.schedule();  // no class-0 work left: all run again
  for (RequestId id = 1; id <= 4; ++id) EXPECT_TRUE(scheduled(o, id));
}

TEST(SchedulerClasses, InteractiveStepsLastTheHoldAfterTheLastUrgentWork) {
  SchedulerConfig c = first_chunk_config(/*max_seqs=*/8, 64, 60);
  c.interactive_step_tokens = 2;
  c.interactive_hold_s = 1.0;
  Scheduler s(c);
  for (RequestId id = 1; id <= 4; ++id) s.add_request(timed(id, 3, /*priority=*/2, 0));
  s.add_request(timed(9, 3, /*priority=*/0, 0));
  s.enforce_time_limits(10.0);
  step_once(s);
  s.finish_requests(Ids{9}, RequestStatus::FinishedAborted);
  const auto lower_scheduled = [&](double now) {
    s.enforce_time_limits(now);
    SchedulerOutput o = s.schedule();
    int n = 0;
    for (RequestId id = 1; id <= 4; ++id) n += scheduled(o, id);
    s.update(o, fake_run(s, o));
    return n;
  };
  EXPECT_EQ(lower_scheduled(10.5), 2);  // within the hold: still capped
  EXPECT_EQ(lower_scheduled(11.1), 4);  // past it: everyone runs
}

}  // namespace
}  // namespace db::test

// Scripted scheduler scenarios: exact decisions and exact block ids on a tiny
// KV pool (block size 4; block 0 is the null block).
#include <gtest/gtest.h>

#include "sched_test_util.h"

namespace db::test {
namespace {

TEST(Scheduler, ChunkedPrefillSplitsAPromptAcrossSteps) {
  Scheduler s(tiny_config(8, /*budget=*/4));
  s.add_request(params(1, iota_tokens(1, 10), /*max_tokens=*/3));

  SchedulerOutput o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1}));
  EXPECT_TRUE(o.scheduled_running.empty());
  const ScheduledRequest& first = o.scheduled_new[0];
  EXPECT_EQ(first.num_computed_tokens, 0);
  EXPECT_EQ(first.num_scheduled_tokens, 4);
  EXPECT_EQ(first.num_samples, 0);
  EXPECT_EQ(first.block_ids, (Blocks{1}));
  EXPECT_EQ(first.new_block_ids, (Blocks{1}));
  ASSERT_TRUE(first.new_data);
  EXPECT_EQ(first.new_data->tokens, iota_tokens(1, 10));
  EXPECT_TRUE(first.new_data->first_admission);
  EXPECT_EQ(o.total_num_scheduled_tokens, 4);
  EXPECT_TRUE(s.update(o, fake_run(s, o)).empty());

  o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1}));
  EXPECT_EQ(o.scheduled_running[0].num_computed_tokens, 4);
  EXPECT_EQ(o.scheduled_running[0].num_scheduled_tokens, 4);
  EXPECT_EQ(o.scheduled_running[0].block_ids, (Blocks{1, 2}));
  EXPECT_EQ(o.scheduled_running[0].new_block_ids, (Blocks{2}));
  EXPECT_FALSE(o.scheduled_running[0].new_data);
  EXPECT_TRUE(s.update(o, fake_run(s, o)).empty());

  o = s.schedule();  // the last 2 prompt tokens: the chunk reaches the end and samples
  EXPECT_EQ(o.scheduled_running[0].num_computed_tokens, 8);
  EXPECT_EQ(o.scheduled_running[0].num_scheduled_tokens, 2);
  EXPECT_EQ(o.scheduled_running[0].num_samples, 1);
  EXPECT_EQ(o.scheduled_running[0].block_ids, (Blocks{1, 2, 3}));
  std::vector<RequestOutput> outs = s.update(o, fake_run(s, o));
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].id, 1u);
  EXPECT_EQ(outs[0].new_tokens[0].token, 1010);
  EXPECT_EQ(outs[0].status, RequestStatus::Running);

  o = s.schedule();  // a decode: one token, no new block
  EXPECT_EQ(o.scheduled_running[0].num_computed_tokens, 10);
  EXPECT_EQ(o.scheduled_running[0].num_scheduled_tokens, 1);
  EXPECT_TRUE(o.scheduled_running[0].new_block_ids.empty());
  s.update(o, fake_run(s, o));

  o = s.schedule();
  EXPECT_EQ(o.scheduled_running[0].num_computed_tokens, 11);
  outs = s.update(o, fake_run(s, o));
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].new_tokens[0].token, 1012);
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedLength);
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 7);

  o = s.schedule();
  EXPECT_EQ(o.finished_ids, (Ids{1}));
  EXPECT_FALSE(o.has_work());
  EXPECT_EQ(s.counters().prompt_tokens_computed, 10);
  EXPECT_EQ(s.counters().generated_tokens, 3);
  EXPECT_EQ(s.counters().steps, 5);
}

TEST(Scheduler, TokenBudgetCutsTheLastChunkAndSeqCapStopsAdmission) {
  Scheduler s(tiny_config(/*max_seqs=*/2, /*budget=*/5, /*num_blocks=*/16));
  s.add_request(params(1, iota_tokens(1, 3)));
  s.add_request(params(2, iota_tokens(11, 3)));
  s.add_request(params(3, iota_tokens(21, 3)));

  SchedulerOutput o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1, 2}));
  EXPECT_EQ(entry(o, 1).num_scheduled_tokens, 3);
  EXPECT_EQ(entry(o, 1).num_samples, 1);
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 2);  // what is left of the budget
  EXPECT_EQ(entry(o, 2).num_samples, 0);
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1}));
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{2}));
  EXPECT_EQ(o.total_num_scheduled_tokens, 5);
  EXPECT_EQ(s.waiting_ids(), (Ids{3}));
  s.update(o, fake_run(s, o));

  o = s.schedule();  // budget is left, but both sequence slots are taken
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1, 2}));
  EXPECT_TRUE(o.scheduled_new.empty());
  EXPECT_EQ(entry(o, 1).num_scheduled_tokens, 1);
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 1);
  EXPECT_EQ(entry(o, 2).num_samples, 1);
  EXPECT_EQ(o.total_num_scheduled_tokens, 2);
  EXPECT_EQ(s.waiting_ids(), (Ids{3}));
}

TEST(Scheduler, LongPrefillThresholdLetsAShortPromptRunInTheSameStep) {
  {
    Scheduler s(tiny_config(8, /*budget=*/8, 16, true, /*threshold=*/4));
    s.add_request(params(1, iota_tokens(1, 10)));
    s.add_request(params(2, iota_tokens(31, 2)));
    const SchedulerOutput o = s.schedule();
    EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1, 2}));
    EXPECT_EQ(entry(o, 1).num_scheduled_tokens, 4);
    EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 2);
    EXPECT_EQ(entry(o, 2).num_samples, 1);
    EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1}));
    EXPECT_EQ(entry(o, 2).block_ids, (Blocks{2}));
  }
  {
    Scheduler s(tiny_config(8, /*budget=*/8, 16, true, /*threshold=*/0));
    s.add_request(params(1, iota_tokens(1, 10)));
    s.add_request(params(2, iota_tokens(31, 2)));
    const SchedulerOutput o = s.schedule();
    EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1}));  // the long prompt takes the whole step
    EXPECT_EQ(entry(o, 1).num_scheduled_tokens, 8);
    EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2}));
  }
}

TEST(Scheduler, AdmitsByPriorityThenArrival) {
  Scheduler s(tiny_config(/*max_seqs=*/2, 64, 16));
  s.add_request(params(1, iota_tokens(1, 2), 2, /*priority=*/1));
  s.add_request(params(2, iota_tokens(11, 2), 2, /*priority=*/2));
  s.add_request(params(3, iota_tokens(21, 2), 1, /*priority=*/0));
  s.add_request(params(4, iota_tokens(31, 2), 2, /*priority=*/1));
  EXPECT_EQ(s.waiting_ids(), (Ids{3, 1, 4, 2}));

  SchedulerOutput o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{3, 1}));
  EXPECT_EQ(entry(o, 3).block_ids, (Blocks{1}));
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{2}));
  EXPECT_EQ(s.running_ids(), (Ids{3, 1}));
  EXPECT_EQ(s.num_running_of_class(0), 1);
  EXPECT_EQ(s.num_running_of_class(1), 1);
  EXPECT_EQ(s.num_running_of_class(2), 0);
  EXPECT_EQ(s.num_waiting_of_class(0), 0);
  EXPECT_EQ(s.num_waiting_of_class(1), 1);
  EXPECT_EQ(s.num_waiting_of_class(2), 1);
  const auto outs = s.update(o, fake_run(s, o));  // 3 finishes (max_tokens 1): a slot opens
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].id, 3u);
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedLength);

  o = s.schedule();
  EXPECT_EQ(o.finished_ids, (Ids{3}));
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1}));
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{4}));
  EXPECT_EQ(entry(o, 4).block_ids, (Blocks{3}));
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));

  s.add_request(params(5, iota_tokens(41, 2), 2, /*priority=*/0));
  EXPECT_EQ(s.waiting_ids(), (Ids{5, 2}));
}

TEST(Scheduler, PrefixHitOnAdmissionSharesFullBlocks) {
  Scheduler s(tiny_config(8, 64, 16));
  s.add_request(params(1, iota_tokens(1, 10)));
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2, 3}));
  s.update(o, fake_run(s, o));

  std::vector<int32_t> prompt = iota_tokens(1, 8);
  prompt.insert(prompt.end(), {50, 51, 52});
  s.add_request(params(2, prompt));
  o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{1}));
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{2}));
  const ScheduledRequest& b = entry(o, 2);
  EXPECT_EQ(b.num_computed_tokens, 8);
  EXPECT_EQ(b.num_scheduled_tokens, 3);
  EXPECT_EQ(b.num_samples, 1);
  EXPECT_EQ(b.block_ids, (Blocks{1, 2, 4}));
  EXPECT_EQ(b.new_block_ids, (Blocks{4}));
  EXPECT_EQ(b.new_data->num_cached_tokens, 8);
  EXPECT_EQ(s.find(2)->num_cached_tokens, 8);
  EXPECT_EQ(s.counters().cached_prompt_tokens, 8);
  EXPECT_EQ(s.counters().prompt_tokens_computed, 13);
  EXPECT_EQ(s.kv_cache().prefix_cache_stats().hit_tokens, 8u);
}

// Prompt logprobs: no prefix-cache hit (every position must be computed), and the
// prompt positions scored per step, over all requests, are capped, which bounds the
// step's logits; other work in the step is not held back by the cap.
TEST(Scheduler, PromptLogprobsTakeNoPrefixHitAndAreCappedPerStep) {
  SchedulerConfig cfg = tiny_config(8, 64, 16);
  cfg.max_scored_prompt_rows = 5;
  Scheduler s(cfg);
  s.add_request(params(1, iota_tokens(1, 10)));
  SchedulerOutput o = s.schedule();
  s.update(o, fake_run(s, o));
  RequestParams scored = params(2, iota_tokens(1, 10));
  scored.sampling.prompt_logprobs = 0;
  RequestParams other = scored;
  other.id = 3;
  s.add_request(scored);
  s.add_request(other);
  o = s.schedule();
  EXPECT_EQ(entry(o, 2).num_computed_tokens, 0) << "no prefix hit, although request 1 cached the prompt";
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 5) << "cut to the step's scored rows";
  EXPECT_FALSE(scheduled(o, 3)) << "no scored row left for the next one this step";
  s.update(o, fake_run(s, o));
  o = s.schedule();
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 5);
  EXPECT_EQ(entry(o, 2).num_samples, 1);
  EXPECT_FALSE(scheduled(o, 3));
  s.update(o, fake_run(s, o));
  o = s.schedule();
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 1) << "decoding is not capped";
  EXPECT_EQ(entry(o, 3).num_scheduled_tokens, 5);
}

TEST(Scheduler, RequestAdmittedInTheSameStepReusesBlocksJustAllocated) {
  Scheduler s(tiny_config(8, 64, 16));
  std::vector<int32_t> prompt = iota_tokens(1, 8);
  prompt.insert(prompt.end(), {50, 51, 52});
  s.add_request(params(1, iota_tokens(1, 10)));
  s.add_request(params(2, prompt));
  const SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2, 3}));
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{1, 2, 4}));
  EXPECT_EQ(entry(o, 2).num_computed_tokens, 8);
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 3);
  EXPECT_EQ(o.total_num_scheduled_tokens, 13);
}

TEST(Scheduler, WithoutPrefixCachingEveryTokenIsComputed) {
  Scheduler s(tiny_config(8, 64, 16, /*caching=*/false));
  std::vector<int32_t> prompt = iota_tokens(1, 8);
  prompt.insert(prompt.end(), {50, 51, 52});
  s.add_request(params(1, iota_tokens(1, 10)));
  s.add_request(params(2, prompt));
  const SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{4, 5, 6}));
  EXPECT_EQ(entry(o, 2).num_computed_tokens, 0);
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 11);
  EXPECT_EQ(s.counters().cached_prompt_tokens, 0);
}

TEST(Scheduler, FullyCachedPromptRecomputesItsLastBlock) {
  Scheduler s(tiny_config(8, 64, 16));
  s.add_request(params(1, iota_tokens(1, 8)));
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2}));
  s.update(o, fake_run(s, o));
  s.add_request(params(2, iota_tokens(1, 8)));
  o = s.schedule();
  EXPECT_EQ(entry(o, 2).num_computed_tokens, 4);
  EXPECT_EQ(entry(o, 2).num_scheduled_tokens, 4);
  EXPECT_EQ(entry(o, 1).new_block_ids, (Blocks{3}));  // 1's first output token starts its third block
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{1, 4}));
}

TEST(Scheduler, EosStopsAndFreesBlocksUnlessIgnored) {
  Scheduler s(tiny_config());
  s.add_request(params(1, iota_tokens(1, 5)));
  RequestParams keep = params(2, iota_tokens(11, 5));
  keep.ignore_eos = true;
  s.add_request(keep);
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).block_ids, (Blocks{1, 2}));
  EXPECT_EQ(entry(o, 2).block_ids, (Blocks{3, 4}));
  ModelRunnerOutput eos;
  eos.requests.push_back({1, {SampledToken{99, std::nullopt, {}}}});
  eos.requests.push_back({2, {SampledToken{99, std::nullopt, {}}}});
  const auto outs = s.update(o, eos);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedStopped);
  EXPECT_EQ(outs[0].stop_token, 99);
  EXPECT_EQ(outs[1].status, RequestStatus::Running);
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 5);
  EXPECT_EQ(s.find(1), nullptr);
  EXPECT_EQ(s.find(2)->output().size(), 1u);
  o = s.schedule();
  EXPECT_EQ(o.finished_ids, (Ids{1}));
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{2}));
}

TEST(Scheduler, StopTokenIdsAndContextLengthFinish) {
  SchedulerConfig c = tiny_config();
  c.max_model_len = 7;
  Scheduler s(c);
  RequestParams with_stop = params(1, iota_tokens(1, 5), 10);
  with_stop.stop_token_ids = {1010};  // the first token the fake model samples for sequence 1
  s.add_request(with_stop);
  s.add_request(params(2, iota_tokens(11, 5), 10));
  SchedulerOutput o = s.schedule();
  auto outs = s.update(o, fake_run(s, o));
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedStopped);
  EXPECT_EQ(outs[0].stop_token, 1010);
  EXPECT_EQ(outs[1].status, RequestStatus::Running);
  o = s.schedule();
  outs = s.update(o, fake_run(s, o));
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedLength);  // 7 tokens: the context is full
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 7);
}

TEST(Scheduler, FinishRequestsRemovesWaitingAndRunningSequences) {
  Scheduler s(tiny_config(/*max_seqs=*/1));
  s.add_request(params(1, iota_tokens(1, 5)));
  s.add_request(params(2, iota_tokens(11, 5)));
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1}));
  s.update(o, fake_run(s, o));
  const RequestId ids[] = {1, 2, 77};
  EXPECT_EQ(s.finish_requests(ids, RequestStatus::FinishedAborted), (Ids{1, 2}));
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 7);
  o = s.schedule();
  EXPECT_EQ(o.finished_ids, (Ids{1}));  // 2 never reached the runner
  EXPECT_FALSE(o.has_work());
}

}  // namespace
}  // namespace db::test

// Draft tokens in the scheduler: they ride after a decode's newest token in the
// spare budget, in lookahead slots that are never prefix-cached, and update()
// keeps exactly the tokens verification emitted and rolls the KV back past the
// rejected ones. Under the first-chunk admission rule, whose preemptions the
// scripts follow block by block.
#include <gtest/gtest.h>

#include "sched_test_util.h"

namespace db::test {
namespace {

// The fake model verifies drafts as the runner does: it emits its own token for
// each position, stopping after the first one that differs from the draft.
ModelRunnerOutput fake_verify(const Scheduler& s, const SchedulerOutput& out) {
  ModelRunnerOutput r = fake_run(s, out);
  for (RequestSamples& rs : r.requests) {
    const ScheduledRequest& sr = entry(out, rs.id);
    if (sr.draft_tokens.empty()) continue;
    const int32_t pos = s.find(rs.id)->num_output_tokens();
    for (size_t i = 0; i < sr.draft_tokens.size() && rs.samples.back().token == sr.draft_tokens[i]; ++i)
      rs.samples.push_back(SampledToken{fake_token(rs.id, pos + static_cast<int32_t>(i) + 1), std::nullopt, {}});
  }
  return r;
}

// Runs steps until request 1 decodes (its prompt computed, one token sampled).
void run_prompt(Scheduler& s) {
  SchedulerOutput o = s.schedule();
  s.update(o, fake_verify(s, o));
  ASSERT_EQ(s.find(1)->num_uncomputed_tokens(), 1);
}

TEST(SchedulerDrafts, AcceptedDraftsAreKeptAndTheirKvStays) {
  Scheduler s(first_chunk_config(8, 64, 16));
  s.add_request(params(1, iota_tokens(1, 6), /*max_tokens=*/10));
  run_prompt(s);  // tokens: 6 prompt + 1 output; 6 computed
  // Drafts equal to what the model will emit at output positions 1, 2, 3.
  s.set_draft_tokens(1, {fake_token(1, 1), fake_token(1, 2), fake_token(1, 3)});
  SchedulerOutput o = s.schedule();
  const ScheduledRequest& e = entry(o, 1);
  EXPECT_EQ(e.num_computed_tokens, 6);
  EXPECT_EQ(e.num_scheduled_tokens, 4);
  EXPECT_EQ(e.num_samples, 1);
  EXPECT_EQ(e.draft_tokens.size(), 3u);
  EXPECT_EQ(e.block_ids.size(), 3u) << "slots for the drafts: positions up to 9 need 3 blocks of 4";
  EXPECT_EQ(o.total_num_scheduled_tokens, 4);
  const std::vector<RequestOutput> outs = s.update(o, fake_verify(s, o));
  ASSERT_EQ(outs.size(), 1u);
  ASSERT_EQ(outs[0].new_tokens.size(), 4u) << "3 accepted drafts and the model's next token";
  for (int32_t i = 0; i < 4; ++i) EXPECT_EQ(outs[0].new_tokens[static_cast<size_t>(i)].token, fake_token(1, 1 + i));
  EXPECT_EQ(s.find(1)->num_output_tokens(), 5);
  EXPECT_EQ(s.find(1)->num_computed_tokens, 10) << "the newest token and the 3 drafts";
  EXPECT_EQ(s.find(1)->num_uncomputed_tokens(), 1);
}

TEST(SchedulerDrafts, RejectedDraftsAreRolledBack) {
  Scheduler s(first_chunk_config(8, 64, 16));
  s.add_request(params(1, iota_tokens(1, 6), /*max_tokens=*/10));
  run_prompt(s);
  s.set_draft_tokens(1, {fake_token(1, 1), 5, 6, 7});  // the second draft is wrong
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(entry(o, 1).num_scheduled_tokens, 5);
  const std::vector<RequestOutput> outs = s.update(o, fake_verify(s, o));
  ASSERT_EQ(outs[0].new_tokens.size(), 2u);
  EXPECT_EQ(outs[0].new_tokens[1].token, fake_token(1, 2));
  EXPECT_EQ(s.find(1)->num_computed_tokens, 8) << "KV of positions 8..10 (rejected) is not kept";
  o = s.schedule();  // a plain decode continues right after the accepted tokens
  EXPECT_EQ(entry(o, 1).num_computed_tokens, 8);
  EXPECT_EQ(entry(o, 1).num_scheduled_tokens, 1);
  EXPECT_TRUE(entry(o, 1).draft_tokens.empty()) << "drafts are used once";
  s.update(o, fake_verify(s, o));
  EXPECT_EQ(s.find(1)->tokens.back(), fake_token(1, 3));
}

TEST(SchedulerDrafts, DraftsTakeOnlyTheSpareBudgetAndStopAtMaxTokens) {
  Scheduler s(first_chunk_config(8, /*budget=*/4, 32));
  s.add_request(params(1, iota_tokens(1, 3), /*max_tokens=*/3));
  s.add_request(params(2, iota_tokens(20, 1), /*max_tokens=*/10));
  SchedulerOutput o = s.schedule();
  s.update(o, fake_verify(s, o));
  ASSERT_EQ(s.find(1)->num_uncomputed_tokens(), 1);
  ASSERT_EQ(s.find(2)->num_uncomputed_tokens(), 1);
  s.set_draft_tokens(1, {1, 2, 3, 4, 5});
  s.set_draft_tokens(2, {1, 2, 3, 4, 5});
  o = s.schedule();
  // Request 1 has 2 output tokens left: one draft at most. Request 2's decode is
  // reserved first, so its own drafts get what is left of the 4 tokens.
  EXPECT_EQ(entry(o, 1).draft_tokens.size(), 1u);
  EXPECT_EQ(entry(o, 2).draft_tokens.size(), 1u);
  EXPECT_EQ(o.total_num_scheduled_tokens, 4);
}

TEST(SchedulerDrafts, DraftsNeverPreemptAndOnlyDecodesGetThem) {
  Scheduler s(first_chunk_config(8, 64, /*num_blocks=*/5));  // 4 usable blocks of 4 tokens
  s.add_request(params(1, iota_tokens(1, 7), /*max_tokens=*/10));
  s.add_request(params(2, iota_tokens(40, 7), /*max_tokens=*/10));
  SchedulerOutput o = s.schedule();
  s.update(o, fake_verify(s, o));
  s.set_draft_tokens(1, {1, 2, 3, 4, 5, 6, 7, 8});  // would need a third block while none is free
  o = s.schedule();
  EXPECT_TRUE(o.preempted_ids.empty());
  EXPECT_TRUE(entry(o, 1).draft_tokens.empty());
  EXPECT_EQ(entry(o, 1).num_scheduled_tokens, 1);
  s.update(o, fake_verify(s, o));
  s.add_request(params(3, iota_tokens(60, 3)));
  s.set_draft_tokens(3, {1, 2});  // waiting: ignored
  o = s.schedule();
  EXPECT_TRUE(s.find(3) == nullptr || s.find(3)->draft_tokens.empty());
}

TEST(SchedulerDrafts, AStopTokenAmongAcceptedDraftsEndsTheSequenceThere) {
  Scheduler s(first_chunk_config(8, 64, 16));
  RequestParams p = params(1, iota_tokens(1, 6), /*max_tokens=*/10);
  p.stop_token_ids = {fake_token(1, 2)};
  s.add_request(p);
  run_prompt(s);
  s.set_draft_tokens(1, {fake_token(1, 1), fake_token(1, 2), fake_token(1, 3)});
  SchedulerOutput o = s.schedule();
  const std::vector<RequestOutput> outs = s.update(o, fake_verify(s, o));
  ASSERT_EQ(outs.size(), 1u);
  ASSERT_EQ(outs[0].new_tokens.size(), 2u) << "nothing after the stop token";
  EXPECT_EQ(outs[0].status, RequestStatus::FinishedStopped);
  EXPECT_EQ(outs[0].stop_token, fake_token(1, 2));
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 15) << "every block back in the pool";
}

TEST(SchedulerDrafts, UnverifiedDraftSlotsAreNeverPrefixCached) {
  Scheduler s(first_chunk_config(8, 64, 16));
  s.add_request(params(1, iota_tokens(1, 3), /*max_tokens=*/20));
  run_prompt(s);  // 4 tokens, 3 computed
  s.set_draft_tokens(1, {7, 7, 7, 7, 7, 7});  // all wrong: positions 4..9 hold rejected drafts' KV
  SchedulerOutput o = s.schedule();
  s.update(o, fake_verify(s, o));
  EXPECT_EQ(s.find(1)->num_computed_tokens, 4);
  // A request whose prompt is the drafted text must find only the first block cached.
  std::vector<int32_t> drafted = iota_tokens(1, 3);
  drafted.push_back(fake_token(1, 0));
  for (int i = 0; i < 6; ++i) drafted.push_back(7);
  s.add_request(params(2, drafted));
  o = s.schedule();
  EXPECT_EQ(entry(o, 2).new_data->num_cached_tokens, 4);
}

}  // namespace
}  // namespace db::test

// Admission under KV pressure (scheduler.h, "Admission"): Reserve admits a request
// only when its prompt and decode headroom fit beside what the running sequences'
// reservations still lack, and preempts the sequence with the least computed work;
// FirstChunk admits on the first chunk and preempts the one that runs last.
// Block size 4; block 0 is the null block.
#include <gtest/gtest.h>

#include <map>

#include "sched_test_util.h"

namespace db::test {
namespace {

SchedulerConfig reserve_config(int32_t max_seqs, int32_t budget, int32_t num_blocks, int32_t headroom = 512) {
  SchedulerConfig c = tiny_config(max_seqs, budget, num_blocks);
  c.admission = AdmissionPolicy::Reserve;
  c.decode_headroom_tokens = headroom;
  return c;
}

struct LoadRun {
  int64_t steps = 0, preemptions = 0, prompt_tokens = 0;
  int32_t most_running = 0;
  std::map<RequestId, std::vector<int32_t>> outputs;
};

// Steps the scheduler with the fake model until nothing is left (at most max_steps).
LoadRun run_to_completion(Scheduler& s, int max_steps = 2000) {
  LoadRun run;
  for (int step = 0; step < max_steps && s.has_unfinished(); ++step) {
    const SchedulerOutput o = s.schedule();
    run.most_running = std::max(run.most_running, s.num_running());
    for (const RequestOutput& out : s.update(o, fake_run(s, o)))
      for (const SampledToken& t : out.new_tokens) run.outputs[out.id].push_back(t.token);
  }
  EXPECT_FALSE(s.has_unfinished()) << "not done after " << max_steps << " steps";
  run.steps = s.counters().steps;
  run.preemptions = s.counters().preemptions;
  run.prompt_tokens = s.counters().prompt_tokens_computed;
  return run;
}

// kRequests prompts of 40 tokens, 12 outputs each: a sequence ends holding 51 tokens
// (13 blocks), and the 40 usable blocks hold 3 of them. Prompt chunks are capped at 8
// tokens and priced by cost as the engine prices them (a token attends to every
// position before it), so a chunk deep in a prompt is shorter and, under the
// first-chunk rule, many prompts are part-computed at once when the pool runs out.
constexpr int kRequests = 12;
constexpr int32_t kPrompt = 40, kOutputs = 12;

LoadRun run_pressure_load(AdmissionPolicy policy) {
  SchedulerConfig c = tiny_config(/*max_seqs=*/16, /*budget=*/64, /*num_blocks=*/41, true, /*threshold=*/8);
  c.prefill_cost.attention_per_position = 0.05;
  c.admission = policy;
  Scheduler s(c);
  for (int i = 0; i < kRequests; ++i)
    s.add_request(params(RequestId(i + 1), iota_tokens(1000 * (i + 1), kPrompt), kOutputs));
  return run_to_completion(s);
}

void expect_every_output(const LoadRun& run) {
  ASSERT_EQ(run.outputs.size(), static_cast<size_t>(kRequests));
  for (const auto& [id, tokens] : run.outputs) {
    std::vector<int32_t> want;
    for (int32_t pos = 0; pos < kOutputs; ++pos) want.push_back(fake_token(id, pos));
    EXPECT_EQ(tokens, want) << "request " << id;
  }
}

TEST(SchedulerAdmission, ReserveRunsWhatThePoolHoldsWithoutPreemptingWhileFirstChunkThrashes) {
  const LoadRun reserve = run_pressure_load(AdmissionPolicy::Reserve);
  const LoadRun first_chunk = run_pressure_load(AdmissionPolicy::FirstChunk);
  std::printf("[ load ] reserve: %lld steps, %lld preemptions, %lld prompt tokens; first chunk: %lld steps, %lld "
              "preemptions, %lld prompt tokens\n",
              static_cast<long long>(reserve.steps), static_cast<long long>(reserve.preemptions),
              static_cast<long long>(reserve.prompt_tokens), static_cast<long long>(first_chunk.steps),
              static_cast<long long>(first_chunk.preemptions), static_cast<long long>(first_chunk.prompt_tokens));
  expect_every_output(reserve);
  expect_every_output(first_chunk);
  EXPECT_EQ(reserve.preemptions, 0);
  EXPECT_EQ(reserve.prompt_tokens, kRequests * kPrompt);  // nothing computed twice
  EXPECT_EQ(reserve.most_running, 3);                     // as many as the pool holds to the end
  // The contrast that makes the first expectations mean something: on the same load
  // the first-chunk rule preempts more than once per request and recomputes prompts.
  EXPECT_GT(first_chunk.preemptions, kRequests);
  EXPECT_GT(first_chunk.prompt_tokens, reserve.prompt_tokens * 3 / 2);
}

// A (8-token prompt, 9 outputs) ends holding 16 tokens, 4 blocks; after its first
// step it holds 2. B (4-token prompt, 1 output) needs 1 block.
void add_a_and_b(Scheduler& s) {
  s.add_request(params(1, iota_tokens(1, 8), /*max_tokens=*/9));
  s.add_request(params(2, iota_tokens(41, 4), /*max_tokens=*/1));
}

TEST(SchedulerAdmission, WaitsUntilItsBlocksFitBesideWhatRunningReservationsLack) {
  Scheduler s(reserve_config(8, 64, /*num_blocks=*/5));  // 4 usable: A takes 2 and lacks 2, none left for B
  add_a_and_b(s);
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1}));
  EXPECT_EQ(s.waiting_ids(), (Ids{2}));
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 2);
  bool a_done = false;
  while (!a_done) {
    s.update(o, fake_run(s, o));
    a_done = s.find(1) == nullptr;
    o = s.schedule();
    if (!a_done) {
      EXPECT_FALSE(scheduled(o, 2)) << "B took a block A is admitted against";
    }
  }
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{2}));
  s.update(o, fake_run(s, o));
  EXPECT_FALSE(s.has_unfinished());
  EXPECT_EQ(s.counters().preemptions, 0);

  SchedulerConfig first_chunk = tiny_config(8, 64, 5);  // the first-chunk rule admits B at once
  first_chunk.admission = AdmissionPolicy::FirstChunk;
  Scheduler f(first_chunk);
  add_a_and_b(f);
  o = f.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1, 2}));
}

TEST(SchedulerAdmission, AdmitsAtOnceWhenEverythingFits) {
  Scheduler s(reserve_config(8, 64, /*num_blocks=*/6));  // 5 usable: A's 2 + 2 lacking + B's 1
  add_a_and_b(s);
  const SchedulerOutput o = s.schedule();
  EXPECT_EQ(ids_of(o.scheduled_new), (Ids{1, 2}));
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 2);
}

TEST(SchedulerAdmission, HeadroomCapsWhatALongOutputReserves) {
  // A may write 1000 tokens (capped by the context, 64): with the default headroom
  // its reservation is the whole context, 16 blocks, and B waits; with a headroom of
  // 4 outputs A reserves 3 blocks (it holds 2) and B runs beside it.
  for (const int32_t headroom : {512, 4}) {
    SCOPED_TRACE("headroom " + std::to_string(headroom));
    Scheduler s(reserve_config(8, 64, /*num_blocks=*/8, headroom));
    s.add_request(params(1, iota_tokens(1, 8), /*max_tokens=*/1000));
    s.add_request(params(2, iota_tokens(41, 4), /*max_tokens=*/1));
    const SchedulerOutput o = s.schedule();
    EXPECT_EQ(ids_of(o.scheduled_new), headroom == 4 ? (Ids{1, 2}) : (Ids{1}));
  }
}

TEST(SchedulerAdmission, VictimIsTheSequenceWithTheLeastComputedWork) {
  // A headroom of one output: each sequence reserves only the tokens it holds, so
  // decoding outgrows the pool (7 usable blocks). 1: 4-token prompt; 2: 16-token
  // prompt, arrived later. At step 6, 1 needs its third block and none is free: 1
  // has computed 8 tokens, 2 has computed 20, so 1 yields (the first-chunk rule
  // preempts 2, the newer arrival, and throws away more work).
  Scheduler s(reserve_config(8, 64, /*num_blocks=*/8, /*headroom=*/1));
  s.add_request(params(1, iota_tokens(1, 4), /*max_tokens=*/20));
  s.add_request(params(2, iota_tokens(21, 16), /*max_tokens=*/8));
  std::vector<int32_t> out1;
  for (int step = 1; step <= 5; ++step) {
    const SchedulerOutput o = s.schedule();
    EXPECT_TRUE(o.preempted_ids.empty()) << "step " << step;
    for (const RequestOutput& out : s.update(o, fake_run(s, o)))
      if (out.id == 1) out1.push_back(out.new_tokens[0].token);
  }
  EXPECT_EQ(s.kv_cache().num_free_blocks(), 0);
  SchedulerOutput o = s.schedule();
  EXPECT_EQ(o.preempted_ids, (Ids{1}));
  EXPECT_EQ(ids_of(o.scheduled_running), (Ids{2}));  // the budget 1 gave back goes to the next sequence
  EXPECT_EQ(entry(o, 2).num_computed_tokens, 20);
  EXPECT_EQ(s.find(1)->num_computed_tokens, 0);
  EXPECT_EQ(s.waiting_ids(), (Ids{1}));
  s.update(o, fake_run(s, o));
  const LoadRun rest = run_to_completion(s);
  out1.insert(out1.end(), rest.outputs.at(1).begin(), rest.outputs.at(1).end());
  std::vector<int32_t> want;
  for (int32_t pos = 0; pos < 20; ++pos) want.push_back(fake_token(1, pos));
  EXPECT_EQ(out1, want);
  EXPECT_EQ(s.counters().preemptions, 1);
}

}  // namespace
}  // namespace db::test

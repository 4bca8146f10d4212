// The scheduling policies as separate units: admission order, budget split,
// preemption choice and stop conditions.
#include <gtest/gtest.h>

#include "sched/budget_split.h"
#include "sched/preemption_policy.h"
#include "sched/stop_check.h"
#include "sched/waiting_queue.h"
#include "sched_test_util.h"

namespace db::test {
namespace {

Request req(RequestId id, int priority, uint64_t arrival) {
  Request r;
  r.id = id;
  r.priority = priority;
  r.arrival_seq = arrival;
  return r;
}

TEST(WaitingQueue, MostUrgentClassFirstThenFifo) {
  Request a = req(1, 1, 0), b = req(2, 2, 1), c = req(3, 0, 2), d = req(4, 1, 3), e = req(5, 2, 4);
  WaitingQueue q;
  for (Request* r : {&a, &b, &c, &d, &e}) q.push_back(r);
  EXPECT_EQ(q.ids(), (Ids{3, 1, 4, 2, 5}));
  EXPECT_EQ(q.front()->id, 3u);
  EXPECT_EQ(q.size_of_class(1), 2u);
  q.pop_front();
  EXPECT_EQ(q.ids(), (Ids{1, 4, 2, 5}));
}

TEST(WaitingQueue, PreemptedRequestGoesToTheFrontOfItsClassOnly) {
  Request a = req(1, 0, 0), b = req(2, 1, 1), c = req(3, 1, 2), x = req(9, 1, 5);
  WaitingQueue q;
  for (Request* r : {&a, &b, &c}) q.push_back(r);
  q.push_front(&x);
  EXPECT_EQ(q.ids(), (Ids{1, 9, 2, 3}));
}

TEST(WaitingQueue, RemoveFromTheMiddle) {
  Request a = req(1, 1, 0), b = req(2, 1, 1), c = req(3, 2, 2);
  WaitingQueue q;
  for (Request* r : {&a, &b, &c}) q.push_back(r);
  EXPECT_TRUE(q.remove(2));
  EXPECT_FALSE(q.remove(2));
  EXPECT_TRUE(q.remove(3));
  EXPECT_EQ(q.ids(), (Ids{1}));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.size_of_class(2), 0u);
}

TEST(BudgetSplit, ChunkIsCutByBudgetAndThreshold) {
  EXPECT_EQ(chunk_tokens(1, 100, 0), 1);     // a decode
  EXPECT_EQ(chunk_tokens(300, 100, 0), 100); // the rest of the budget
  EXPECT_EQ(chunk_tokens(300, 100, 16), 16); // a long prompt leaves room for others
  EXPECT_EQ(chunk_tokens(10, 100, 16), 10);  // short prompts are not cut
  EXPECT_EQ(chunk_tokens(10, 0, 16), 0);
}

TEST(BudgetSplit, AutoThresholdIsAQuarterOfTheBudgetInWholeBlocks) {
  EXPECT_EQ(auto_long_prefill_threshold(2048, 16), 512);
  EXPECT_EQ(auto_long_prefill_threshold(100, 16), 32);
  EXPECT_EQ(auto_long_prefill_threshold(16, 64), 16);
  EXPECT_EQ(auto_long_prefill_threshold(1, 16), 1);
}

TEST(BudgetSplit, AutoSharedThresholdIsAnEighthOfTheThresholdInWholeBlocks) {
  EXPECT_EQ(auto_shared_prefill_threshold(512, 16), 64);
  EXPECT_EQ(auto_shared_prefill_threshold(100, 16), 16);
  EXPECT_EQ(auto_shared_prefill_threshold(8, 16), 8);  // never above the threshold
  EXPECT_EQ(auto_shared_prefill_threshold(0, 16), 0);  // no threshold, no cap
}

TEST(BudgetSplit, StepWithoutShortWorkCutsLongChunksToTheThreshold) {
  const ChunkLimits limits{512, 64};
  StepBudget b(2048, limits, 0, false);
  EXPECT_EQ(b.offer(8000, 0), 512);
  b.take(8000, 0, 512);
  EXPECT_EQ(b.offer(8000, 0), 512);
  EXPECT_EQ(b.left(), 1536);
}

TEST(BudgetSplit, StepWithShortWorkServesItFirstAndCutsLongChunksToTheSharedThreshold) {
  const ChunkLimits limits{512, 64};
  StepBudget b(100, limits, /*short_reserved=*/50, true);
  EXPECT_TRUE(b.is_short(64, 0));
  EXPECT_FALSE(b.is_short(65, 0));
  EXPECT_EQ(b.offer(8000, 0), 50);  // what the reserved short work leaves
  b.take(8000, 0, 50);
  EXPECT_EQ(b.offer(8000, 0), 0);   // no room left beside the reserved short work
  EXPECT_EQ(b.offer(40, 0), 40);    // a short prompt gets all of it
  b.take(40, 0, 40);
  EXPECT_EQ(b.offer(8000, 0), 0);
  b.drop_reservation();
  EXPECT_EQ(b.offer(8000, 0), 10);
}

TEST(PreemptionPolicy, NewestOfTheLeastUrgentClass) {
  Request a = req(1, 1, 0), b = req(2, 1, 1), c = req(3, 1, 2);
  std::vector<Request*> same = {&a, &b, &c};
  EXPECT_EQ(choose_preemption_victim(same), 2u);
  Request d = req(4, 2, 0), e = req(5, 0, 1), f = req(6, 1, 2);
  std::vector<Request*> mixed = {&e, &d, &f};
  EXPECT_EQ(choose_preemption_victim(mixed), 1u);  // the oldest, but the least urgent
  Request g = req(7, 1, 3), h = req(8, 1, 3);      // forks of one request: the higher sample id goes first
  std::vector<Request*> forks = {&h, &g};
  EXPECT_EQ(choose_preemption_victim(forks), 0u);
}

TEST(PreemptionPolicy, LeastRecomputeInTheLeastUrgentClass) {
  Request a = req(1, 1, 0), b = req(2, 1, 1), c = req(3, 1, 2);
  a.num_computed_tokens = 300;
  b.num_computed_tokens = 40;  // an older arrival with less work done than the newest
  c.num_computed_tokens = 1200;
  std::vector<Request*> same = {&a, &b, &c};
  EXPECT_EQ(choose_least_recompute_victim(same), 1u);
  EXPECT_EQ(choose_preemption_victim(same), 2u);  // the first-chunk rule's victim: the newest
  EXPECT_EQ(choose_victim(AdmissionPolicy::Reserve, same), 1u);
  EXPECT_EQ(choose_victim(AdmissionPolicy::FirstChunk, same), 2u);
  Request d = req(4, 2, 0);
  d.num_computed_tokens = 5000;  // the least urgent class goes first, whatever its work
  std::vector<Request*> mixed = {&a, &b, &d};
  EXPECT_EQ(choose_least_recompute_victim(mixed), 2u);
  Request e = req(5, 1, 3);
  e.num_computed_tokens = 40;  // a tie: the one that runs last
  std::vector<Request*> tie = {&e, &b};
  EXPECT_EQ(choose_least_recompute_victim(tie), 0u);
}

Request with_output(std::vector<int32_t> prompt, std::vector<int32_t> output, int32_t max_tokens) {
  Request r;
  r.tokens = prompt;
  r.num_prompt_tokens = static_cast<int32_t>(prompt.size());
  r.tokens.insert(r.tokens.end(), output.begin(), output.end());
  r.max_tokens = max_tokens;
  return r;
}

TEST(StopCheck, EosStopTokensLengthAndContext) {
  const std::vector<int32_t> eos = {99};
  EXPECT_FALSE(check_stop(with_output({1, 2}, {}, 4), eos, 64));
  EXPECT_FALSE(check_stop(with_output({1, 2}, {5}, 4), eos, 64));

  const auto by_eos = check_stop(with_output({1, 2}, {5, 99}, 4), eos, 64);
  ASSERT_TRUE(by_eos);
  EXPECT_EQ(by_eos->status, RequestStatus::FinishedStopped);
  EXPECT_EQ(by_eos->stop_token, 99);

  Request ignoring = with_output({1, 2}, {99}, 4);
  ignoring.ignore_eos = true;
  EXPECT_FALSE(check_stop(ignoring, eos, 64));

  Request stop_id = with_output({1, 2}, {7}, 4);
  stop_id.stop_token_ids = {7};
  stop_id.ignore_eos = true;  // stop token ids apply even when EOS is ignored
  ASSERT_TRUE(check_stop(stop_id, eos, 64));
  EXPECT_EQ(check_stop(stop_id, eos, 64)->stop_token, 7);

  const auto length = check_stop(with_output({1, 2}, {5, 6, 8}, 3), eos, 64);
  ASSERT_TRUE(length);
  EXPECT_EQ(length->status, RequestStatus::FinishedLength);
  EXPECT_EQ(length->stop_token, -1);

  const auto context = check_stop(with_output({1, 2, 3}, {5}, 30), eos, 4);
  ASSERT_TRUE(context);
  EXPECT_EQ(context->status, RequestStatus::FinishedLength);

  // EOS on the last allowed token is a stop, not a length finish.
  EXPECT_EQ(check_stop(with_output({1}, {5, 99}, 2), eos, 64)->status, RequestStatus::FinishedStopped);
}

}  // namespace
}  // namespace db::test

// The draft model proposer's own KV cache: after verifications that accept
// some, none or all drafts, drafting from the cache carried across steps gives
// exactly the drafts a fresh proposer computes from the whole sequence; when
// its store is full it drops idle sequences' caches, rebuilds them on demand,
// and forgetting every sequence returns every block.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "engine_test_util.h"
#include "spec/draft_model_proposer.h"

namespace db::test {
namespace {

constexpr int32_t kDrafts = 4;

std::unique_ptr<DraftModelProposer> proposer(ThreadPool& pool, int32_t num_blocks) {
  auto draft = DraftModel::open(default_model_as(DType::Q4_0), default_bundle()->tokenizer(),
                                default_bundle()->model().config().vocab);
  return std::make_unique<DraftModelProposer>(std::move(draft), pool, num_blocks, 16, DType::F16);
}

std::vector<int32_t> draft(DraftProposer& p, RequestId id, const std::vector<int32_t>& tokens) {
  const DraftQuery q{id, tokens, 0, kDrafts};
  std::vector<std::vector<int32_t>> out;
  p.propose({&q, 1}, out);
  return out.at(0);
}

std::vector<int32_t> fresh_draft(ThreadPool& pool, const std::vector<int32_t>& tokens) {
  return draft(*proposer(pool, 64), 1, tokens);
}

TEST(DraftModelProposer, CachedDraftsEqualFreshOnesAfterAnyVerification) {
  ASSERT_NE(default_bundle(), nullptr);
  ThreadPool pool(2);
  auto p = proposer(pool, 64);
  std::vector<int32_t> tokens = default_bundle()->encode_prompt("The three primary colors are red, yellow and");
  // How many drafts each simulated verification accepts; a rejected draft is
  // replaced by another token, an all-accepted draft gets a bonus token.
  for (int32_t accept : {1, 0, 4, 2, 0, 3}) {
    const std::vector<int32_t> d = draft(*p, 1, tokens);
    ASSERT_EQ(d.size(), static_cast<size_t>(kDrafts));
    EXPECT_EQ(d, fresh_draft(pool, tokens)) << "after " << tokens.size() << " tokens";
    tokens.insert(tokens.end(), d.begin(), d.begin() + accept);
    tokens.push_back(accept < kDrafts ? (d[static_cast<size_t>(accept)] + 1) % 1000 : 42);
  }
  p->forget(1);
  EXPECT_EQ(p->kv_blocks_in_use(), 0);
}

TEST(DraftModelProposer, AFullStoreDropsIdleCachesAndRebuildsThem) {
  ASSERT_NE(default_bundle(), nullptr);
  ThreadPool pool(2);
  auto p = proposer(pool, 5);  // 80 tokens: room for one of the sequences below at a time
  const std::vector<int32_t> a =
      default_bundle()->encode_prompt("Once upon a time, in a small village by the sea, there lived an old fisherman "
                                      "who every morning rowed out past the rocks to check his nets and");
  const std::vector<int32_t> b =
      default_bundle()->encode_prompt("def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n    if n "
                                      "< 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n\n"
                                      "def factorial(n):\n");
  ASSERT_LE(std::max(a.size(), b.size()) + kDrafts, 80u);
  ASSERT_GT(a.size() + b.size() + 2 * kDrafts, 80u);
  EXPECT_EQ(draft(*p, 1, a), fresh_draft(pool, a));
  EXPECT_EQ(draft(*p, 2, b), fresh_draft(pool, b)) << "sequence 1's cache makes room";
  EXPECT_EQ(draft(*p, 1, a), fresh_draft(pool, a)) << "rebuilt";
  // Both in one step cannot fit: one of them drafts, the other waits.
  const DraftQuery both[] = {{1, a, 0, kDrafts}, {2, b, 0, kDrafts}};
  std::vector<std::vector<int32_t>> out;
  p->propose(both, out);
  EXPECT_EQ(out.at(0).empty() + out.at(1).empty(), 1);
  p->forget(1);
  p->forget(2);
  EXPECT_EQ(p->kv_blocks_in_use(), 0);
}

}  // namespace
}  // namespace db::test

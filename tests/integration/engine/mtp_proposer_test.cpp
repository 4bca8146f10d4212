// The MTP proposer on a model whose multi-token-prediction layer repeats its
// one block and reads only the token (deepseek_mtp_file()): its drafts must be
// that model's greedy continuation of the sequence without its first token,
// after verifications that accept some, none or all drafts, and also for a
// sequence whose earlier states it never saw. The target's hidden states it
// drafts from are the rows the output head multiplies.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "deepseek_bundles.h"
#include "io/gguf.h"
#include "sample/sampler.h"
#include "spec/mtp_proposer.h"

namespace db::test {
namespace {

constexpr int32_t kMtpDrafts = 5;
constexpr int32_t kBlocks = 32, kBlockSize = 16;

// One sequence's step on `model` over `kv` (its blocks in order, so slot = position):
// positions [first, first + tokens.size()), logits for every row.
void run(Model& model, KVStore& kv, std::span<const int32_t> tokens, int32_t first, ThreadPool& pool,
         std::vector<float>& logits) {
  Batch b;
  AttentionMetadata a;
  b.query_start = {0};
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t pos = first + static_cast<int32_t>(i);
    b.token_ids.push_back(tokens[i]);
    b.positions.push_back(pos);
    b.logits_indices.push_back(static_cast<int32_t>(i));
    a.slot_mapping.push_back(pos);
  }
  b.query_start.push_back(b.num_tokens());
  a.block_size = kv.block_size();
  a.context_lens = {first + b.num_tokens()};
  std::vector<int32_t> table;
  for (int32_t k = 0; k < kv.num_blocks(); ++k) table.push_back(k);
  a.block_tables = {table};
  model.forward(b, a, kv, pool, logits);
}

int32_t argmax_row(const std::vector<float>& logits, int64_t row, int32_t vocab) {
  return argmax(logits.data() + row * vocab, vocab);
}

// The model's greedy continuation (kMtpDrafts tokens) of `tokens` without its first.
std::vector<int32_t> shifted_continuation(Model& model, const std::vector<int32_t>& tokens, ThreadPool& pool) {
  const int32_t vocab = model.config().vocab;
  KVStore kv(model.kv_cache_shape(), kBlocks, kBlockSize, DType::F32);
  std::vector<int32_t> seq(tokens.begin() + 1, tokens.end()), out;
  std::vector<float> logits;
  run(model, kv, seq, 0, pool, logits);
  out.push_back(argmax_row(logits, static_cast<int64_t>(seq.size()) - 1, vocab));
  while (static_cast<int32_t>(out.size()) < kMtpDrafts) {
    const auto pos = static_cast<int32_t>(seq.size() + out.size()) - 1;
    run(model, kv, std::span<const int32_t>(&out.back(), 1), pos, pool, logits);
    out.push_back(argmax_row(logits, 0, vocab));
  }
  return out;
}

std::vector<int32_t> mtp_draft(DraftProposer& p, RequestId id, const std::vector<int32_t>& tokens) {
  const DraftQuery q{id, tokens, 0, kMtpDrafts};
  std::vector<std::vector<int32_t>> out;
  p.propose({&q, 1}, out);
  return out.at(0);
}

void show(DraftProposer& p, RequestId id, int32_t first, int32_t count, const std::vector<int32_t>& tokens) {
  const TargetStepSequence s{id, first, count, 0, tokens};
  p.observe_step({&s, 1});
}

std::vector<int32_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

struct MtpSetup {
  Model& model = deepseek_mtp_bundle().model();
  ThreadPool pool{2};
  KVStore kv{model.kv_cache_shape(), kBlocks, kBlockSize, DType::F32};
  std::vector<float> logits;
  int32_t vocab = model.config().vocab;
};

TEST(MtpProposer, DraftsAreTheModulesContinuationAfterAnyVerification) {
  MtpSetup t;
  ASSERT_NE(t.model.mtp(), nullptr);
  MtpProposer p(t.model, t.pool, kBlocks, kBlockSize, DType::F32);
  std::vector<int32_t> tokens = bytes_of("Multi-token prediction drafts from the model's state: ");
  const auto prompt = static_cast<int32_t>(tokens.size());
  run(t.model, t.kv, tokens, 0, t.pool, t.logits);
  tokens.push_back(argmax_row(t.logits, prompt - 1, t.vocab));
  show(p, 1, 0, prompt, tokens);
  for (int32_t accept : {1, 0, 5, 2, 0, 3, 4}) {
    const std::vector<int32_t> d = mtp_draft(p, 1, tokens);
    ASSERT_EQ(d.size(), static_cast<size_t>(kMtpDrafts));
    EXPECT_EQ(d, shifted_continuation(t.model, tokens, t.pool)) << "after " << tokens.size() << " tokens";
    // Verification: the newest token and the drafts in one step; `accept` of them
    // are taken (whatever the target said), then the target's token after them.
    const auto last = static_cast<int32_t>(tokens.size()) - 1;
    std::vector<int32_t> feed{tokens.back()};
    feed.insert(feed.end(), d.begin(), d.end());
    run(t.model, t.kv, feed, last, t.pool, t.logits);
    tokens.insert(tokens.end(), d.begin(), d.begin() + accept);
    tokens.push_back(argmax_row(t.logits, accept, t.vocab));
    show(p, 1, last, static_cast<int32_t>(feed.size()), tokens);
  }
  EXPECT_GT(p.kv_blocks_in_use(), 0);
  p.forget(1);
  EXPECT_EQ(p.kv_blocks_in_use(), 0);
}

// A sequence that arrives at position 20 (its prefix computed unseen, as on a
// prefix cache hit): the missing entries are computed from zero states, which
// this module ignores, so its drafts are still exact.
TEST(MtpProposer, EntriesOfUnseenPositionsAreFilledIn) {
  MtpSetup t;
  MtpProposer p(t.model, t.pool, kBlocks, kBlockSize, DType::F32);
  std::vector<int32_t> tokens = bytes_of("The first twenty bytes are cached; the rest is computed now.");
  const auto prompt = static_cast<int32_t>(tokens.size());
  run(t.model, t.kv, std::span<const int32_t>(tokens).first(20), 0, t.pool, t.logits);
  run(t.model, t.kv, std::span<const int32_t>(tokens).subspan(20), 20, t.pool, t.logits);
  tokens.push_back(argmax_row(t.logits, prompt - 21, t.vocab));
  show(p, 7, 20, prompt - 20, tokens);
  EXPECT_EQ(mtp_draft(p, 7, tokens), shifted_continuation(t.model, tokens, t.pool));
  // Not caught up (no step shown for a longer sequence): no drafts.
  tokens.push_back(1);
  EXPECT_TRUE(mtp_draft(p, 7, tokens).empty());
}

// last_hidden_states() row r times the output matrix is row r of the logits.
TEST(MtpProposer, TargetHiddenStatesAreTheRowsTheHeadMultiplies) {
  MtpSetup t;
  ASSERT_NE(t.model.mtp(), nullptr);
  const std::vector<int32_t> tokens = bytes_of("hidden states");
  run(t.model, t.kv, tokens, 0, t.pool, t.logits);
  const std::span<const float> hidden = t.model.last_hidden_states();
  const int64_t h = t.model.config().hidden;
  ASSERT_EQ(hidden.size(), tokens.size() * static_cast<size_t>(h));
  auto file = GGUFFile::open(deepseek_mtp_file());
  const TensorView out = file->tensor("output.weight");
  ASSERT_EQ(out.dtype, DType::F32);
  for (size_t r = 0; r < tokens.size(); ++r)
    for (int64_t v = 0; v < t.vocab; v += 37) {
      const auto* w = reinterpret_cast<const float*>(out.row(v));
      double dot = 0;
      for (int64_t i = 0; i < h; ++i) dot += double{w[i]} * hidden[r * static_cast<size_t>(h) + static_cast<size_t>(i)];
      EXPECT_NEAR(dot, t.logits[r * static_cast<size_t>(t.vocab) + static_cast<size_t>(v)], 1e-4) << r << " " << v;
    }
}

}  // namespace
}  // namespace db::test

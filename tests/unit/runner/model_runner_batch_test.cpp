// ModelRunner: the varlen batch and attention metadata it builds from a
// SchedulerOutput, which rows it samples, the state it keeps per sequence, and
// the KV block copies it applies before the forward pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "fake_model.h"
#include "util/error.h"

namespace db::runner_test {
namespace {

using Ints = std::vector<int32_t>;
using Slots = std::vector<int64_t>;

std::vector<RequestId> ids_of(const ModelRunnerOutput& out) {
  std::vector<RequestId> ids;
  for (const auto& r : out.requests) ids.push_back(r.id);
  return ids;
}

// One sampled token per request, in output order.
Ints tokens_of(const ModelRunnerOutput& out) {
  Ints t;
  for (const auto& r : out.requests) {
    EXPECT_EQ(r.samples.size(), 1u) << "request " << r.id;
    t.push_back(r.samples.empty() ? -1 : r.samples.front().token);
  }
  return t;
}

// Two steps of prefill chunks (finished and unfinished, one after a prefix-cache
// hit) and decodes, with blocks that are neither contiguous nor in id order.
TEST_F(RunnerTest, BuildsTheVarlenBatchOfMixedPrefillChunksAndDecodes) {
  // Step 1, all new: seq 1 runs the first 4 of its 6 prompt tokens (no sample);
  // seq 2 its whole 2-token prompt; seq 3 its last prompt token after 4 cached ones.
  const Ints p1{3, 1, 4, 1, 5, 9}, p2{2, 7}, p3{8, 8, 8, 8, 8};
  ModelRunnerOutput out1 = runner.execute(make_step(
      {}, {new_seq(1, p1, 0, 4, 0, {7}), new_seq(2, p2, 0, 2, 1, {2}), new_seq(3, p3, 4, 1, 1, {5, 9})}));
  ASSERT_EQ(model.calls.size(), 1u);
  {
    const Batch& b = model.calls[0].batch;
    const AttentionMetadata& a = model.calls[0].attn;
    EXPECT_EQ(b.token_ids, (Ints{3, 1, 4, 1, 2, 7, 8}));
    EXPECT_EQ(b.positions, (Ints{0, 1, 2, 3, 0, 1, 4}));
    EXPECT_EQ(b.query_start, (Ints{0, 4, 6, 7}));
    EXPECT_EQ(b.logits_indices, (Ints{5, 6}));  // seq 1's chunk is not its last
    EXPECT_EQ(a.block_size, kBlockSize);
    EXPECT_EQ(a.context_lens, (Ints{4, 2, 5}));
    EXPECT_EQ(a.block_tables, (std::vector<Ints>{{7}, {2}, {5, 9}}));
    EXPECT_EQ(a.slot_mapping, (Slots{28, 29, 30, 31, 8, 9, 36}));  // position 4 of seq 3: block 9, row 0
  }
  const int32_t t2 = fake_peak(7, 1), t3 = fake_peak(8, 4);
  EXPECT_EQ(ids_of(out1), (std::vector<RequestId>{2, 3}));
  EXPECT_EQ(tokens_of(out1), (Ints{t2, t3}));
  EXPECT_EQ(*runner.tokens_of(1), p1);  // nothing sampled, nothing appended
  EXPECT_EQ(*runner.tokens_of(2), (Ints{2, 7, t2}));
  EXPECT_EQ(*runner.tokens_of(3), (Ints{8, 8, 8, 8, 8, t3}));

  // Step 2: running in the scheduler's order (3, 1, 2: not id order), then a new seq 4.
  // Seq 1 finishes its prompt in a second block; seqs 3 and 2 decode their sampled tokens.
  const Ints p4{6, 0, 11};
  ModelRunnerOutput out2 = runner.execute(make_step(
      {running_seq(3, 5, 1, 1, {5, 9}), running_seq(1, 4, 2, 1, {7, 3}), running_seq(2, 2, 1, 1, {2})},
      {new_seq(4, p4, 0, 3, 1, {1})}));
  ASSERT_EQ(model.calls.size(), 2u);
  {
    const Batch& b = model.calls[1].batch;
    const AttentionMetadata& a = model.calls[1].attn;
    EXPECT_EQ(b.token_ids, (Ints{t3, 5, 9, t2, 6, 0, 11}));
    EXPECT_EQ(b.positions, (Ints{5, 4, 5, 2, 0, 1, 2}));
    EXPECT_EQ(b.query_start, (Ints{0, 1, 3, 4, 7}));
    EXPECT_EQ(b.logits_indices, (Ints{0, 2, 3, 6}));  // the last row of every sequence
    EXPECT_EQ(a.context_lens, (Ints{6, 6, 3, 3}));
    EXPECT_EQ(a.block_tables, (std::vector<Ints>{{5, 9}, {7, 3}, {2}, {1}}));
    EXPECT_EQ(a.slot_mapping, (Slots{37, 12, 13, 10, 4, 5, 6}));
  }
  EXPECT_EQ(ids_of(out2), (std::vector<RequestId>{3, 1, 2, 4}));
  EXPECT_EQ(tokens_of(out2), (Ints{fake_peak(t3, 5), fake_peak(9, 5), fake_peak(t2, 2), fake_peak(11, 2)}));
  EXPECT_EQ(runner.num_sequences(), 4u);
}

TEST_F(RunnerTest, AnUnfinishedPrefillChunkSamplesNothingAndTheNextChunkContinuesIt) {
  const Ints prompt{9, 4, 2, 6, 13};
  ModelRunnerOutput out = runner.execute(make_step({}, {new_seq(1, prompt, 0, 3, 0, {4, 6})}));
  EXPECT_TRUE(out.requests.empty());
  ASSERT_EQ(model.calls.size(), 1u);  // the chunk still runs, to fill the KV cache
  EXPECT_EQ(model.calls[0].batch.token_ids, (Ints{9, 4, 2}));
  EXPECT_TRUE(model.calls[0].batch.logits_indices.empty());
  EXPECT_EQ(*runner.tokens_of(1), prompt);

  out = runner.execute(make_step({running_seq(1, 3, 2, 1, {4, 6})}));
  ASSERT_EQ(model.calls.size(), 2u);
  EXPECT_EQ(model.calls[1].batch.token_ids, (Ints{6, 13}));
  EXPECT_EQ(model.calls[1].batch.positions, (Ints{3, 4}));
  EXPECT_EQ(model.calls[1].attn.slot_mapping, (Slots{19, 24}));  // block 4 row 3, block 6 row 0
  EXPECT_EQ(model.calls[1].attn.context_lens, (Ints{5}));
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].id, 1u);
  EXPECT_EQ(tokens_of(out), (Ints{fake_peak(13, 4)}));
}

// Greedy decoding over several steps: each step feeds back the token sampled
// by the previous one, at the next position.
TEST_F(RunnerTest, GreedyDecodingFollowsTheModelsArgmaxStepByStep) {
  runner.execute(make_step({}, {new_seq(1, {5, 3}, 0, 2, 1, {0, 1})}));
  Ints expected{5, 3};
  expected.push_back(fake_peak(3, 1));
  for (int32_t pos = 2; pos < 6; ++pos) {
    ModelRunnerOutput out = runner.execute(make_step({running_seq(1, pos, 1, 1, {0, 1})}));
    EXPECT_EQ(model.calls.back().batch.token_ids, (Ints{expected.back()}));
    EXPECT_EQ(model.calls.back().batch.positions, (Ints{pos}));
    expected.push_back(fake_peak(expected.back(), pos));
    EXPECT_EQ(tokens_of(out), (Ints{expected.back()}));
  }
  EXPECT_EQ(*runner.tokens_of(1), expected);
}

TEST_F(RunnerTest, AStepWithNothingScheduledRunsNoForward) {
  ModelRunnerOutput out = runner.execute(SchedulerOutput{});
  EXPECT_TRUE(out.requests.empty());
  EXPECT_TRUE(model.calls.empty());
}

// Fills every K and V row of `block` with `byte`.
void fill_block(KVStore& kv, int32_t block, uint8_t byte) {
  for (int l = 0; l < kv.n_layers(); ++l)
    for (int r = 0; r < kv.block_size(); ++r) {
      std::memset(kv.k_row(l, int64_t{block} * kv.block_size() + r), byte, kv.k_row_nbytes());
      std::memset(kv.v_row(l, int64_t{block} * kv.block_size() + r), byte, kv.v_row_nbytes());
    }
}

// Every byte of block's K and V rows equals `byte`.
bool block_is(const KVStore& kv, int32_t block, uint8_t byte) {
  for (int l = 0; l < kv.n_layers(); ++l)
    for (int r = 0; r < kv.block_size(); ++r)
      for (size_t i = 0; i < std::max(kv.k_row_nbytes(), kv.v_row_nbytes()); ++i)
        if ((i < kv.k_row_nbytes() && kv.k_row(l, int64_t{block} * kv.block_size() + r)[i] != byte) ||
            (i < kv.v_row_nbytes() && kv.v_row(l, int64_t{block} * kv.block_size() + r)[i] != byte))
          return false;
  return true;
}

// A fork's copy-on-write: the step's block copies land in the store before the
// forward pass that reads the new block.
TEST_F(RunnerTest, AppliesTheStepsBlockCopiesBeforeTheForwardPass) {
  fill_block(*kv, 2, 0x5a);
  fill_block(*kv, 11, 0x33);
  bool copied_before_forward = false;
  model.on_forward = [&](const Batch&, const AttentionMetadata&, KVStore& store) {
    copied_before_forward = block_is(store, 6, 0x5a) && block_is(store, 12, 0x33);
  };
  SchedulerOutput step = make_step({}, {new_seq(1, {1, 2, 3, 4, 5, 6}, 4, 2, 1, {6, 12})});
  step.block_copies = {{2, 6}, {11, 12}};
  runner.execute(step);
  ASSERT_EQ(model.calls.size(), 1u);
  EXPECT_TRUE(copied_before_forward);
  EXPECT_TRUE(block_is(*kv, 2, 0x5a));  // the source stays
  EXPECT_TRUE(block_is(*kv, 0, 0));     // other blocks untouched
}

TEST_F(RunnerTest, ABlockCopyOutsideTheStoreThrowsBeforeTheForwardPass) {
  SchedulerOutput step = make_step({}, {new_seq(1, {1, 2}, 0, 2, 1, {0})});
  step.block_copies = {{0, 16}};
  EXPECT_THROW(runner.execute(step), Error);
  EXPECT_TRUE(model.calls.empty());
}

TEST_F(RunnerTest, ForgetsPreemptedAndFinishedSequences) {
  runner.execute(make_step({}, {new_seq(1, {1}, 0, 1, 1, {0}), new_seq(2, {2}, 0, 1, 1, {1}),
                                new_seq(3, {3}, 0, 1, 1, {2})}));
  ASSERT_EQ(runner.num_sequences(), 3u);
  SchedulerOutput step = make_step({running_seq(2, 1, 1, 1, {1})});
  step.preempted_ids = {1};
  step.finished_ids = {3};
  ModelRunnerOutput out = runner.execute(step);
  EXPECT_EQ(ids_of(out), (std::vector<RequestId>{2}));
  EXPECT_EQ(runner.num_sequences(), 1u);
  EXPECT_EQ(runner.tokens_of(1), nullptr);
  EXPECT_EQ(runner.tokens_of(3), nullptr);
  ASSERT_NE(runner.tokens_of(2), nullptr);
  // A preempted sequence comes back as new, with everything it had so far.
  const Ints resumed{1, fake_peak(1, 0)};
  out = runner.execute(make_step({}, {new_seq(1, resumed, 0, 2, 1, {5}, greedy(), {}, /*num_prompt=*/1)}));
  EXPECT_EQ(model.calls.back().batch.token_ids, resumed);
  EXPECT_EQ(tokens_of(out), (Ints{fake_peak(resumed[1], 1)}));
}

TEST_F(RunnerTest, RejectsAStepInconsistentWithWhatItHolds) {
  // A running sequence it never saw.
  EXPECT_THROW(runner.execute(make_step({running_seq(9, 0, 1, 1, {0})})), Error);
  // A new sequence without its data.
  ScheduledRequest no_data = new_seq(1, {1, 2}, 0, 2, 1, {0});
  no_data.new_data.reset();
  EXPECT_THROW(runner.execute(make_step({}, {no_data})), Error);
  // Tokens past the ones it knows.
  EXPECT_THROW(runner.execute(make_step({}, {new_seq(2, {1, 2}, 0, 3, 1, {0})})), Error);
  // A sample from a chunk that ends before the last known token.
  EXPECT_THROW(runner.execute(make_step({}, {new_seq(3, {1, 2, 3}, 0, 2, 1, {0})})), Error);
  // Blocks that do not cover the step's positions.
  EXPECT_THROW(runner.execute(make_step({}, {new_seq(4, {1, 2, 3, 4, 5}, 0, 5, 1, {0})})), Error);
  EXPECT_TRUE(model.calls.empty());
}

}  // namespace
}  // namespace db::runner_test

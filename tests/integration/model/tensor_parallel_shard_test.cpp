// Tensor-parallel shards of llama-family models in one process: the ranks run as
// threads joined by in-process collectives, and each rank's logits must match the
// whole model's under mixed prefill and decode batches: bitwise when the shards
// gather (ShardJoin::Gather), up to summation order when they all-reduce (Reduce:
// the split input dimensions of attn_output and ffn_down are added in another order,
// and a quantized model's next activations may then round to another step).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "default_model.h"
#include "dist/communicator.h"
#include "model/llama_decoder.h"
#include "model/model.h"
#include "model/model_source.h"
#include "model_test_util.h"
#include "thread_communicator.h"
#include "util/error.h"

namespace db::test {
namespace {

std::vector<std::vector<int32_t>> test_sequences(int vocab) { return patterned_sequences(vocab, 4, 9, 7); }

// The per-rank logits of `path` split over `size` threads (run_chunked_mixed's
// schedule), each thread driving its own shard (no ShardedModel: every rank is fed
// the same batches directly).
std::vector<SeqLogits> run_shards(const std::string& path, int size, dist::ShardJoin join,
                                  const std::vector<std::vector<int32_t>>& seqs) {
  ThreadGroup group(size);
  std::vector<SeqLogits> out(static_cast<size_t>(size));
  std::vector<std::string> errors(static_cast<size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      ThreadCommunicator comm(group, r);
      try {
        std::unique_ptr<Model> m = make_llama_decoder_shard(ModelSource::open(path), nullptr, comm, join);
        PagedRunner runner(*m, 16, 64, DType::F32, 1, 7);
        out[static_cast<size_t>(r)] = run_chunked_mixed(runner, seqs);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  return out;
}

// tolerance < 0: bitwise.
void expect_shards_match_whole(const std::string& path, int size, dist::ShardJoin join, double tolerance) {
  std::unique_ptr<Model> whole = load_model(path);
  const auto seqs = test_sequences(whole->config().vocab);
  PagedRunner runner(*whole, 16, 64, DType::F32, 1, 7);
  const SeqLogits want = run_chunked_mixed(runner, seqs);
  const std::vector<SeqLogits> got = run_shards(path, size, join, seqs);
  for (int r = 0; r < size; ++r) {
    const double diff = max_abs_diff(want, got[static_cast<size_t>(r)]);
    std::printf("%s at %d ranks (%s): rank %d logits differ from the whole model's by %.3g at most\n",
                path.c_str(), size, dist::shard_join_name(join), r, diff);
    if (tolerance < 0)
      EXPECT_TRUE(bit_identical(want, got[static_cast<size_t>(r)])) << "rank " << r << ": " << diff;
    else
      EXPECT_LE(diff, tolerance) << "rank " << r;
  }
  EXPECT_TRUE(bit_identical(got[0], got[static_cast<size_t>(size) - 1])) << "the ranks' logits drifted apart";
}

using dist::ShardJoin;

TEST(TensorParallelShard, GatherIsBitwiseTheWholeModel) {
  const Fixture tiny = load_fixture("llama_tiny");
  // GGUF files, and a checkpoint directory (its matrices converted at load, then sliced).
  for (const char* format : {"f32", "q8_0", "safetensors"})
    expect_shards_match_whole(fixture_model_path(tiny, format), 2, ShardJoin::Gather, -1);
  // A GPTQ checkpoint: its matrices repacked into Q4_1 at load, the converter told of each slice.
  expect_shards_match_whole(DB_SOURCE_DIR "/tests/data/model/llama_tiny_gptq", 2, ShardJoin::Gather, -1);
  ASSERT_TRUE(default_model_present());
  expect_shards_match_whole(kDefaultModelPath, 2, ShardJoin::Gather, -1);
  expect_shards_match_whole(kDefaultModelPath, 3, ShardJoin::Gather, -1);
}

TEST(TensorParallelShard, ReduceMatchesUpToSummationOrder) {
  const Fixture tiny = load_fixture("llama_tiny");
  expect_shards_match_whole(fixture_model_path(tiny, "f32"), 2, ShardJoin::Reduce, 1e-4);
  expect_shards_match_whole(fixture_model_path(tiny, "q8_0"), 2, ShardJoin::Reduce, 1e-3);  // FFN split 64 + 32
  ASSERT_TRUE(default_model_present());
  // Q4_1 with 8-bit activations: a sum one ulp off can round the next layer's
  // activations to another step, so logits move by up to a few units (a broken
  // split moves them by tens).
  expect_shards_match_whole(kDefaultModelPath, 2, ShardJoin::Reduce, 4.0);
}

TEST(TensorParallelShard, QwenTinyWithOneKvHeadRefusesTwoRanks) {
  const std::string path = fixture_model_path(load_fixture("qwen2_tiny"), "f32");
  ThreadGroup group(1);
  ThreadCommunicator comm(group, 0);
  // A group of 2 seen from rank 0 (the plan is refused before any collective).
  struct Two : ThreadCommunicator {
    using ThreadCommunicator::ThreadCommunicator;
    int size() const override { return 2; }
  } two(group, 0);
  LoadOptions o;
  o.tensor_parallel = &two;
  try {
    load_model(path, nullptr, o);
    FAIL() << "a 1-KV-head model was split over 2 ranks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--tensor-parallel-size 2 is above the model's 1 KV heads"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace db::test

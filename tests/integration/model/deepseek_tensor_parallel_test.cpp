// Tensor parallelism for the tiny DeepSeek-V2 / V3 fixtures in one process, alone and
// with expert parallelism: the ranks run as threads joined by in-process collectives
// (thread_communicator.h). Rank e * T + t of a T x E grid is rank t of tensor group e
// (heads and dense / shared FFN columns, model/mla_shard.h) and rank e of expert group
// t (routed experts, model/expert_shard.h). Every rank's logits must be bitwise the
// whole model's under mixed prefill and decode batches (gather joins and the combine
// sum in one process's order). Also: the heads and columns each rank holds, and the
// sizes a split refuses.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "dist/parallel_groups.h"
#include "model/deepseek_decoder.h"
#include "model/mla_shard.h"
#include "model/model.h"
#include "model/model_source.h"
#include "model_test_util.h"
#include "thread_communicator.h"
#include "util/error.h"

namespace db::test {
namespace {

void expect_grid_bitwise_whole(const std::string& path, int tp, int ep) {
  std::unique_ptr<Model> whole = load_model(path);
  const auto seqs = patterned_sequences(whole->config().vocab, 5, 6, 9);
  PagedRunner runner(*whole, 16, 64, DType::F32, 1, 7);
  const SeqLogits want = run_chunked_mixed(runner, seqs);

  const int size = tp * ep;
  std::vector<std::unique_ptr<ThreadGroup>> tensor_groups, expert_groups;
  for (int e = 0; e < ep; ++e) tensor_groups.push_back(std::make_unique<ThreadGroup>(tp));
  for (int t = 0; t < tp; ++t) expert_groups.push_back(std::make_unique<ThreadGroup>(ep));
  std::vector<SeqLogits> got(static_cast<size_t>(size));
  std::vector<MlaShard> held(static_cast<size_t>(size));
  const std::vector<std::string> errors = run_ranks(size, [&](int r) {
    const dist::GridPosition at = dist::grid_position(r, tp);  // the rank grid of an mpirun job
    ThreadCommunicator tensor(*tensor_groups[static_cast<size_t>(at.expert_rank)], at.tensor_rank);
    ThreadCommunicator experts(*expert_groups[static_cast<size_t>(at.tensor_rank)], at.expert_rank);
    std::unique_ptr<Model> m = make_deepseek_decoder_shard(ModelSource::open(path), nullptr, tensor,
                                                           dist::ShardJoin::Gather, ep > 1 ? &experts : nullptr);
    held[static_cast<size_t>(r)] = static_cast<DeepseekDecoder&>(*m).tensor_shard();
    PagedRunner shard_runner(*m, 16, 64, DType::F32, 1, 7);
    got[static_cast<size_t>(r)] = run_chunked_mixed(shard_runner, seqs);
  });
  for (const std::string& e : errors) ASSERT_EQ(e, "");
  for (int r = 0; r < size; ++r) {
    const MlaShard& h = held[static_cast<size_t>(r)];
    EXPECT_EQ(h.rank, r % tp);
    EXPECT_EQ(h.size, tp);
    const double diff = max_abs_diff(want, got[static_cast<size_t>(r)]);
    std::printf("%s at T %d x E %d: rank %d (heads [%d, %d)) logits differ from the whole model's by %.3g\n",
                path.c_str(), tp, ep, r, h.head_begin, h.head_end, diff);
    EXPECT_TRUE(bit_identical(want, got[static_cast<size_t>(r)])) << "rank " << r << ": " << diff;
  }
}

TEST(MlaShard, SplitsHeadsAndColumnsEvenly) {
  // 4 heads, dense FFN 96, shared experts 32 at 3 ranks: the lower ranks take one more.
  const int heads[3][2] = {{0, 2}, {2, 3}, {3, 4}};
  const int64_t ffn[3][2] = {{0, 32}, {32, 64}, {64, 96}}, shared[3][2] = {{0, 11}, {11, 22}, {22, 32}};
  for (int r = 0; r < 3; ++r) {
    const MlaShard s = make_mla_shard(4, 96, 32, r, 3);
    EXPECT_EQ(s.head_begin, heads[r][0]);
    EXPECT_EQ(s.head_end, heads[r][1]);
    EXPECT_EQ(s.ffn_begin, ffn[r][0]);
    EXPECT_EQ(s.ffn_end, ffn[r][1]);
    EXPECT_EQ(s.shared_begin, shared[r][0]);
    EXPECT_EQ(s.shared_end, shared[r][1]);
  }
  EXPECT_EQ(even_split_columns(4, 32, 3), (std::vector<int64_t>{0, 64, 96, 128}));
  const MlaShard none = make_mla_shard(4, 96, 0, 1, 2);  // no shared experts: an empty range
  EXPECT_EQ(none.shared_begin, none.shared_end);
}

TEST(MlaShard, RefusesWhatItCannotSplit) {
  EXPECT_NE(error_of([] { make_mla_shard(4, 96, 32, 0, 5); })
                .find("--tensor-parallel-size 5 is above the model's 4 attention heads"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_mla_shard(16, 8, 32, 0, 9); })
                .find("--tensor-parallel-size 9 is above the model's 8 dense feed-forward columns"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_mla_shard(4, 96, 32, 2, 2); }).find("outside a tensor-parallel group of 2"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_mla_shard(4, 96, 32, 0, 0); }).find("must be at least 1"), std::string::npos);
}

TEST(DeepseekTensorParallel, ShardsAreBitwiseTheWholeModel) {
  for (const char* fixture : {"deepseek_v2_tiny", "deepseek_v3_tiny"}) {
    const Fixture f = load_fixture(fixture);
    for (const char* format : {"f32", "q8_0"})
      for (int tp : {2, 3}) expect_grid_bitwise_whole(fixture_model_path(f, format), tp, 1);
  }
}

TEST(DeepseekTensorParallel, WithExpertParallelIsBitwiseTheWholeModel) {
  for (const char* fixture : {"deepseek_v2_tiny", "deepseek_v3_tiny"}) {
    const Fixture f = load_fixture(fixture);
    expect_grid_bitwise_whole(fixture_model_path(f, "q8_0"), 2, 2);
    expect_grid_bitwise_whole(fixture_model_path(f, "f32"), 2, 4);
  }
}

TEST(DeepseekTensorParallel, RefusesTheReduceJoinAndTooManyRanks) {
  const std::string v2 = fixture_model_path(load_fixture("deepseek_v2_tiny"), "f32");
  ThreadGroup g(1);
  ThreadCommunicator one(g, 0);
  EXPECT_NE(error_of([&] { make_deepseek_decoder_shard(ModelSource::open(v2), nullptr, one, dist::ShardJoin::Reduce); })
                .find("--tensor-parallel-join reduce: deepseek2 models are split with the gather join only"),
            std::string::npos);
  struct Posing : ThreadCommunicator {
    Posing(ThreadGroup& grp) : ThreadCommunicator(grp, 0) {}
    int size() const override { return 5; }
  } five(g);
  EXPECT_NE(error_of([&] { make_deepseek_decoder_shard(ModelSource::open(v2), nullptr, five, dist::ShardJoin::Gather); })
                .find("--tensor-parallel-size 5 is above the model's 4 attention heads"),
            std::string::npos);
}

}  // namespace
}  // namespace db::test

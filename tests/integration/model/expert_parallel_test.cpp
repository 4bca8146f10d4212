// Expert-parallel shards of the tiny DeepSeek-V2 / V3 fixtures in one process: the
// ranks run as threads joined by in-process collectives (thread_communicator.h), each
// loading only its routed experts, and each rank's logits must be bitwise the whole
// model's under mixed prefill and decode batches (the combine adds every token's
// expert rows in one process's order). Also: which experts each rank holds, and the
// sizes and models a split refuses.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "dist/communicator.h"
#include "model/deepseek_decoder.h"
#include "model/deepseek_weights.h"
#include "model/expert_shard.h"
#include "model/model.h"
#include "model/model_source.h"
#include "model_test_util.h"
#include "thread_communicator.h"
#include "util/error.h"

namespace db::test {
namespace {

std::vector<std::vector<int32_t>> test_sequences(int vocab) { return patterned_sequences(vocab, 5, 6, 9); }

// A communicator that says it is rank `rank` of `size` and fails any collective: for
// loads that must be refused, or that make none.
struct Posing : ThreadCommunicator {
  Posing(ThreadGroup& g, int rank, int size) : ThreadCommunicator(g, rank), size_(size) {}
  int size() const override { return size_; }
  int size_;
};

void expect_shards_bitwise_whole(const std::string& path, int size) {
  std::unique_ptr<Model> whole = load_model(path);
  const auto seqs = test_sequences(whole->config().vocab);
  PagedRunner runner(*whole, 16, 64, DType::F32, 1, 7);
  const SeqLogits want = run_chunked_mixed(runner, seqs);

  ThreadGroup group(size);
  std::vector<SeqLogits> got(static_cast<size_t>(size));
  std::vector<ExpertShard> held(static_cast<size_t>(size));
  const std::vector<std::string> errors = run_ranks(size, [&](int r) {
    ThreadCommunicator comm(group, r);
    std::unique_ptr<Model> m = make_deepseek_decoder_expert_shard(ModelSource::open(path), nullptr, comm);
    held[static_cast<size_t>(r)] = static_cast<DeepseekDecoder&>(*m).expert_shard();
    PagedRunner shard_runner(*m, 16, 64, DType::F32, 1, 7);
    got[static_cast<size_t>(r)] = run_chunked_mixed(shard_runner, seqs);
  });
  for (const std::string& e : errors) ASSERT_EQ(e, "");
  const int n = whole->config().moe.n_experts;
  for (int r = 0; r < size; ++r) {
    const ExpertShard& h = held[static_cast<size_t>(r)];
    EXPECT_EQ(h.begin, r * n / size);
    EXPECT_EQ(h.end, (r + 1) * n / size);
    const double diff = max_abs_diff(want, got[static_cast<size_t>(r)]);
    std::printf("%s at %d ranks: rank %d (experts [%d, %d)) logits differ from the whole model's by %.3g\n",
                path.c_str(), size, r, h.begin, h.end, diff);
    EXPECT_TRUE(bit_identical(want, got[static_cast<size_t>(r)])) << "rank " << r << ": " << diff;
  }
}

TEST(ExpertShard, ContiguousRangesAndRefusals) {
  const int want[3][2] = {{0, 2}, {2, 5}, {5, 8}};
  for (int r = 0; r < 3; ++r) {
    const ExpertShard s = make_expert_shard(8, r, 3);
    EXPECT_EQ(s.begin, want[r][0]);
    EXPECT_EQ(s.end, want[r][1]);
  }
  EXPECT_EQ(make_expert_shard(64, 1, 2).begin, 32);
  EXPECT_NE(error_of([] { make_expert_shard(8, 0, 9); })
                .find("--expert-parallel-size 9 is above the model's 8 routed experts per layer"),
            std::string::npos);
  EXPECT_NE(error_of([] { make_expert_shard(8, 0, 0); }).find("must be at least 1"), std::string::npos);
  EXPECT_NE(error_of([] { make_expert_shard(8, 2, 2); }).find("outside the group"), std::string::npos);
  const ExpertShard whole = make_expert_shard(8, nullptr);
  EXPECT_FALSE(whole.split());
  EXPECT_EQ(whole.end, 8);
}

// Each rank reads only its experts from the file: the others have null data.
TEST(ExpertParallel, RankLoadsOnlyItsExperts) {
  for (const char* format : {"f32", "safetensors"}) {
    const std::string path = fixture_model_path(load_fixture("deepseek_v3_tiny"), format);
    auto src = ModelSource::open(path);
    const ModelConfig c = read_model_config(*src);
    ThreadGroup g(1);
    Posing rank1(g, 1, 3);  // experts [2, 5) of 8
    const DeepseekWeights w = load_deepseek_weights(*src, c, nullptr, make_expert_shard(c.moe.n_experts, &rank1));
    int layers = 0;
    for (int l = 0; l < c.n_layers; ++l) {
      if (!c.moe.is_moe_layer(l)) continue;
      ++layers;
      const MoeLayerWeights& m = w.layers[static_cast<size_t>(l)].moe;
      ASSERT_EQ(m.experts.size(), 8u);
      for (int e = 0; e < 8; ++e) {
        const bool held = e >= 2 && e < 5;
        const ExpertWeights& x = m.experts[static_cast<size_t>(e)];
        EXPECT_EQ(x.gate.data != nullptr, held) << format << " layer " << l << " expert " << e;
        EXPECT_EQ(x.up.data != nullptr, held) << format << " layer " << l << " expert " << e;
        EXPECT_EQ(x.down.data != nullptr, held) << format << " layer " << l << " expert " << e;
      }
      EXPECT_NE(m.shared.gate.data, nullptr);  // shared experts and router: on every rank
      EXPECT_EQ(m.router.size(), static_cast<size_t>(8 * c.hidden));
    }
    EXPECT_GT(layers, 0);
  }
}

TEST(ExpertParallel, ShardsAreBitwiseTheWholeModel) {
  for (const char* fixture : {"deepseek_v2_tiny", "deepseek_v3_tiny"}) {
    const Fixture f = load_fixture(fixture);
    for (const char* format : {"f32", "q8_0"})
      for (int size : {2, 3, 4}) expect_shards_bitwise_whole(fixture_model_path(f, format), size);
    // A checkpoint directory: per-expert tensors, only this rank's read.
    expect_shards_bitwise_whole(fixture_model_path(f, "safetensors"), 2);
  }
}

TEST(ExpertParallel, RefusesWhatItCannotSplit) {
  ThreadGroup g(1);
  const std::string v2 = fixture_model_path(load_fixture("deepseek_v2_tiny"), "f32");
  Posing nine(g, 0, 9);
  LoadOptions o;
  o.expert_parallel = &nine;
  EXPECT_NE(error_of([&] { load_model(v2, nullptr, o); })
                .find("--expert-parallel-size 9 is above the model's 8 routed experts per layer"),
            std::string::npos);
  Posing two(g, 0, 2);
  o.expert_parallel = &two;
  const std::string llama = fixture_model_path(load_fixture("llama_tiny"), "f32");
  EXPECT_NE(error_of([&] { load_model(llama, nullptr, o); })
                .find("expert parallelism splits the routed experts of deepseek2 models; this one is llama"),
            std::string::npos);
  o.tensor_parallel = &two;  // with tensor parallelism too: still deepseek2 only
  EXPECT_NE(error_of([&] { load_model(llama, nullptr, o); })
                .find("expert parallelism splits the routed experts of deepseek2 models; this one is llama"),
            std::string::npos);
}

}  // namespace
}  // namespace db::test

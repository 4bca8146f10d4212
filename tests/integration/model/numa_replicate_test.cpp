// --numa replicate end to end on a model: loaded under a node layout, the model
// copies every matrix its matmuls read (model/weight_loading.h), and greedy
// decoding gives bit for bit the tokens and logits of a model loaded without
// one. This machine may have a single node: the layout puts two slots on its
// node 0 (one CPU each), and a poisoned copy shows that the threads of slot 1
// really read theirs. Runs the default model (dense, repacked at load) and the
// tiny DeepSeek-V3 fixture (MoE: the routed experts' products), also from a
// pre-packed file (matrices read in place from the mapping).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "default_model.h"
#include "kernels/weight_replicas.h"
#include "model/gguf_pack.h"
#include "model/model.h"
#include "model_test_util.h"
#include "scratch_dir.h"
#include "util/cpu_features.h"
#include "util/numa_nodes.h"

namespace db::test {
namespace {

struct Decoded {
  std::vector<int32_t> tokens;
  SeqLogits logits;
};

Decoded greedy(Model& m, const std::vector<int32_t>& prompt, int threads) {
  PagedRunner r(m, 16, 8, DType::F32, threads, 5);
  int id = 0;
  Decoded d;
  d.tokens = greedy_decode(r, prompt, 6, &id);
  d.logits = {r.logits(id)};
  return d;
}

struct Case {
  std::string name;
  std::string path;
  std::vector<int32_t> prompt;
  std::shared_ptr<ScratchDir> dir;  // holds a pre-packed copy
};

Case case_named(const std::string& name) {
  if (name == "smollm2") return {name, kDefaultModelPath, {1, 504, 3575, 282, 4649, 314}, nullptr};
  const Fixture f = load_fixture("deepseek_v3_tiny");
  Case c{name, fixture_model_path(f, "q8_0"), f.sequences[0], nullptr};
  if (name == "deepseek_v3_tiny_packed") {
    c.dir = std::make_shared<ScratchDir>("numa_replicate");
    const std::string packed = c.dir->file("packed.gguf");
    pack_gguf(c.path, packed, cpu_features().level);
    c.path = packed;
  }
  return c;
}

class NumaReplicateTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { saved_ = this_thread_cpus(); }
  void TearDown() override {
    install_node_layout({});
    pin_to_cpus(saved_);
  }
  std::vector<int> saved_;
};

TEST_P(NumaReplicateTest, GreedyOutputIsBitIdenticalAndEachSlotReadsItsCopy) {
  const Case c = case_named(GetParam());
  if (c.name == "smollm2") ASSERT_TRUE(default_model_present());
  const Decoded off = greedy(*load_model(c.path), c.prompt, 2);

  install_node_layout({{0, {saved_.front()}}, {0, {saved_.back()}}});
  std::unique_ptr<Model> model = load_model(c.path);
  const std::vector<kernels::ReplicatedRange> copies = kernels::replicated_ranges(1);
  ASSERT_FALSE(copies.empty()) << "nothing was replicated";
  for (const kernels::ReplicatedRange& r : copies) {
    ASSERT_NE(r.copy, r.original);
    ASSERT_EQ(std::memcmp(r.copy, r.original, r.bytes), 0);
  }
  // Two threads: the caller on slot 0 (the original), the worker on slot 1 (the copy).
  const Decoded both = greedy(*model, c.prompt, 2);
  EXPECT_EQ(both.tokens, off.tokens);
  EXPECT_TRUE(bit_identical(both.logits, off.logits)) << "max diff " << max_abs_diff(both.logits, off.logits);
  // One thread on slot 1: every product reads the copy.
  pin_to_node_slot(1);
  const Decoded copy = greedy(*model, c.prompt, 1);
  EXPECT_EQ(copy.tokens, off.tokens);
  EXPECT_TRUE(bit_identical(copy.logits, off.logits)) << "max diff " << max_abs_diff(copy.logits, off.logits);
  for (const kernels::ReplicatedRange& r : copies) std::memset(const_cast<uint8_t*>(r.copy), 0x11, r.bytes);
  const Decoded poisoned = greedy(*model, c.prompt, 1);
  EXPECT_FALSE(bit_identical(poisoned.logits, off.logits)) << "slot 1 did not read the copy";
  pin_to_node_slot(0);
  const Decoded original = greedy(*model, c.prompt, 1);
  EXPECT_TRUE(bit_identical(original.logits, off.logits)) << "slot 0 does not read the original";
  model.reset();
  EXPECT_TRUE(kernels::replicated_ranges(1).empty()) << "the unloaded model's copies are still registered";
}

INSTANTIATE_TEST_SUITE_P(Models, NumaReplicateTest, ::testing::Values("smollm2", "deepseek_v3_tiny", "deepseek_v3_tiny_packed"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace db::test

// --numa replicate's copies of the weights (kernels/weight_replicas.h): distinct
// memory holding the same bytes, each thread's matmul reading its own slot's
// copy, and the products unchanged. This machine may have one node: the layouts
// here put two slots on its node 0, so a poisoned copy shows which copy a
// product read.
#include <gtest/gtest.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "kernels/weight_replicas.h"
#include "test_weights.h"
#include "util/numa_nodes.h"

namespace db::kernels {
namespace {

// Two slots on node 0 (the first and last allowed CPU); the test thread is
// left on slot 0 and its affinity restored afterwards.
class ReplicaLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = this_thread_cpus();
    install_node_layout({{0, {saved_.front()}}, {0, {saved_.back()}}});
  }
  void TearDown() override {
    install_node_layout({});
    pin_to_cpus(saved_);
  }
  std::vector<int> saved_;
};

int page_node(const void* p) {
  int node = -1;
  EXPECT_EQ(syscall(SYS_get_mempolicy, &node, nullptr, 0UL, p, MPOL_F_ADDR | MPOL_F_NODE), 0);
  return node;
}

TEST(WeightReplicas, OneSlotReplicatesNothing) {
  std::vector<uint8_t> a(1000, 7);
  WeightReplicas none({{a.data(), a.size()}}, {0});
  EXPECT_EQ(none.slots(), 0);
  EXPECT_TRUE(replicated_ranges(1).empty());
  EXPECT_EQ(weights_of_slot(a.data(), a.size(), 1), a.data());
}

TEST(WeightReplicas, CopiesAreDistinctMemoryWithTheSameBytes) {
  std::vector<uint8_t> a(10000), b(3000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 7);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 13);
  // An overlapping pair (merged into one range), a repeat, and b alone.
  const std::vector<WeightRange> ranges = {{a.data(), 6000}, {a.data() + 4000, 6000}, {b.data(), b.size()},
                                           {a.data() + 10, 20}};
  {
    WeightReplicas r(ranges, {0, 0, 0});
    EXPECT_EQ(r.slots(), 3);
    EXPECT_EQ(r.ranges(), 2u);
    EXPECT_EQ(r.bytes_per_copy(), a.size() + b.size());
    for (int slot : {1, 2}) {
      const std::vector<ReplicatedRange> got = replicated_ranges(slot);
      ASSERT_EQ(got.size(), 2u);
      for (const ReplicatedRange& g : got) {
        EXPECT_NE(g.copy, g.original);
        EXPECT_EQ(std::memcmp(g.copy, g.original, g.bytes), 0);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(g.copy) % 4096, reinterpret_cast<uintptr_t>(g.original) % 4096);
        EXPECT_EQ(page_node(g.copy), 0);
        int mode = -1;
        unsigned long mask[16] = {};
        ASSERT_EQ(syscall(SYS_get_mempolicy, &mode, mask, 1025UL, g.copy, MPOL_F_ADDR), 0);
        EXPECT_EQ(mode, MPOL_PREFERRED) << "the copy's memory was not placed on its node";
      }
      EXPECT_NE(replicated_ranges(1)[0].copy, replicated_ranges(2)[0].copy);
    }
    // Translation: inside a range, at the same offset; a span leaving its range, or slot 0, reads the original.
    const uint8_t* a1 = weights_of_slot(a.data(), a.size(), 1);
    EXPECT_NE(a1, a.data());
    EXPECT_EQ(weights_of_slot(a.data() + 500, 100, 1), a1 + 500);
    EXPECT_EQ(weights_of_slot(a.data() + 500, 100, 2), weights_of_slot(a.data(), 1, 2) + 500);
    EXPECT_EQ(weights_of_slot(a.data() + 9000, 2000, 1), a.data() + 9000);
    EXPECT_EQ(weights_of_slot(a.data(), a.size(), 0), a.data());
    EXPECT_EQ(weights_of_slot(a.data(), a.size(), 3), a.data());  // no such copy
    EXPECT_EQ(local_weights(a.data(), a.size()), a.data());       // this thread: slot 0
  }
  EXPECT_TRUE(replicated_ranges(1).empty()) << "a destroyed WeightReplicas still translates";
  EXPECT_EQ(weights_of_slot(a.data(), a.size(), 1), a.data());
}

// A matmul over every packed format at this level and a fused gate read the
// calling thread's copy: unchanged bytes give the same bits, a poisoned copy
// changes the products of the thread on its slot only.
TEST_F(ReplicaLayout, EachThreadsMatmulReadsItsSlotsCopy) {
  const int64_t rows = 96, cols = 256, n_tokens = 5;
  const auto w = testing::make_weights(DType::Q8_0, rows, cols, 3);
  const auto up = testing::make_weights(DType::Q8_0, rows, cols, 4);
  const std::vector<float> x = testing::make_activations(n_tokens, cols, 9);
  PackedWeightStore store;
  const TensorView wv = store.prepare(w.view()), uv = store.prepare(up.view());
  ThreadPool pool(1);  // the calling thread runs every chunk: its slot decides
  // The plain product and the fused gate, each on its own.
  const auto run = [&] {
    std::vector<float> y(n_tokens * rows), g(n_tokens * rows), u(n_tokens * rows);
    matmul(wv, x.data(), n_tokens, y.data(), pool);
    matmul_swiglu(wv, uv, x.data(), n_tokens, g.data(), u.data(), pool);
    return std::make_pair(y, g);
  };
  const auto want = run();
  WeightReplicas replicas(store.handed_out(), {0, 0});
  ASSERT_EQ(replicas.slots(), 2);
  pin_to_node_slot(1);
  const auto same = run();
  EXPECT_EQ(same.first, want.first) << "slot 1's copy computes other bits";
  EXPECT_EQ(same.second, want.second) << "slot 1's copy computes other bits";
  for (const ReplicatedRange& r : replicated_ranges(1)) std::memset(const_cast<uint8_t*>(r.copy), 0x11, r.bytes);
  const auto poisoned = run();
  EXPECT_NE(poisoned.first, want.first) << "slot 1's matmul did not read its copy";
  EXPECT_NE(poisoned.second, want.second) << "slot 1's fused gate did not read its copy";
  pin_to_node_slot(0);
  const auto original = run();
  EXPECT_EQ(original.first, want.first) << "slot 0 reads the original";
  EXPECT_EQ(original.second, want.second) << "slot 0 reads the original";
}

}  // namespace
}  // namespace db::kernels

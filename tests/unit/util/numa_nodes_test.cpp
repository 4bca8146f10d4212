// The node layout of --numa replicate (util/numa_nodes.h): which pool thread
// runs on which node slot, pool workers really pinned there, and a memory range
// really given a preferred node. This machine may have one node: the layouts
// here put two slots on its node 0, one CPU (or the same CPU) each.
#include <gtest/gtest.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "util/huge_buffer.h"
#include "util/numa_nodes.h"
#include "util/thread_pool.h"

namespace db {
namespace {

// Two slots on node 0: the first and the last CPU this process may use.
class TwoSlotLayout : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = this_thread_cpus();
    ASSERT_FALSE(saved_.empty());
    slots_ = {{0, {saved_.front()}}, {0, {saved_.back()}}};
    install_node_layout(slots_);
  }
  void TearDown() override {
    install_node_layout({});
    pin_to_cpus(saved_);
  }
  std::vector<int> saved_;
  std::vector<NodeCpus> slots_;
};

TEST(NumaNodes, PoolThreadsSpreadEvenlyOverTheSlots) {
  const auto slots_of = [](int n_threads, int n_slots) {
    std::vector<int> out;
    for (int tid = 0; tid < n_threads; ++tid) out.push_back(node_slot_of_thread(tid, n_threads, n_slots));
    return out;
  };
  EXPECT_EQ(slots_of(16, 2), (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(slots_of(3, 2), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(slots_of(6, 4), (std::vector<int>{0, 0, 1, 2, 2, 3}));
  EXPECT_EQ(slots_of(2, 4), (std::vector<int>{0, 2}));  // fewer threads than nodes: spread, not packed
  EXPECT_EQ(slots_of(1, 2), (std::vector<int>{0}));
}

TEST(NumaNodes, FewerThanTwoSlotsIsNoLayout) {
  install_node_layout({{0, {0}}});
  EXPECT_TRUE(node_layout().empty());
  EXPECT_EQ(node_layout_cpu_count(), 0);
  EXPECT_THROW(pin_to_node_slot(0), Error);
}

TEST(NumaNodes, ASlotWithoutCpusIsRefused) { EXPECT_THROW(install_node_layout({{0, {0}}, {1, {}}}), Error); }

TEST_F(TwoSlotLayout, TheInstallingThreadRunsOnSlotZero) {
  EXPECT_EQ(this_thread_node_slot(), 0);
  EXPECT_EQ(this_thread_cpus(), slots_[0].cpus);
  EXPECT_EQ(node_layout_cpu_count(), 2);
  EXPECT_EQ(resolve_threads(0), 2);  // both slots' CPUs, though this thread is pinned to one
  EXPECT_THROW(pin_to_node_slot(2), Error);
}

// Each worker pins itself to its slot when it starts: a pool of 2 has its
// worker on slot 1. The first call waits (bounded) for a second thread to
// take part, so that the worker is seen.
TEST_F(TwoSlotLayout, PoolWorkersRunOnTheirSlots) {
  ThreadPool pool(2);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::vector<std::pair<int, std::vector<int>>> seen;  // (slot, affinity) per call
  std::vector<std::thread::id> threads;
  pool.run([&](int, int) {
    std::unique_lock<std::mutex> lock(mu);
    seen.emplace_back(this_thread_node_slot(), this_thread_cpus());
    threads.push_back(std::this_thread::get_id());
    ++arrived;
    cv.notify_all();
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == 2; });
  });
  ASSERT_EQ(seen.size(), 2u);
  ASSERT_NE(threads[0], threads[1]) << "one thread ran both calls: the worker never took part";
  for (const auto& [slot, cpus] : seen) {
    ASSERT_TRUE(slot == 0 || slot == 1) << slot;
    EXPECT_EQ(cpus, slots_[static_cast<size_t>(slot)].cpus) << "slot " << slot;
  }
  EXPECT_NE(seen[0].first, seen[1].first) << "both threads on one slot";
}

TEST(NumaNodes, AMemoryRangeGetsItsPreferredNode) {
  HugeBuffer buf(size_t{4} << 20);
  ASSERT_TRUE(prefer_memory_node(buf.data() + 100, buf.size() - 200, 0, false)) << std::strerror(errno);
  int mode = -1;
  unsigned long mask[16] = {};
  ASSERT_EQ(syscall(SYS_get_mempolicy, &mode, mask, 1025UL, buf.data() + 4096, MPOL_F_ADDR), 0);
  EXPECT_EQ(mode, MPOL_PREFERRED);
  EXPECT_EQ(mask[0], 1UL);
  std::memset(buf.data(), 1, buf.size());
  int node = -1;
  ASSERT_EQ(syscall(SYS_get_mempolicy, &node, nullptr, 0UL, buf.data() + 4096, MPOL_F_ADDR | MPOL_F_NODE), 0);
  EXPECT_EQ(node, 0);
  EXPECT_FALSE(prefer_memory_node(buf.data(), 4096, 5000, false));  // past any node mask
}

}  // namespace
}  // namespace db

// NUMA placement: the topology read from sysfs-shaped trees, the placement rules
// on synthetic multi-node machines (this one may have a single node), and the
// placement carried out on this machine's own node.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "dist/numa_apply.h"
#include "dist/numa_placement.h"
#include "dist/numa_topology.h"
#include "util/error.h"

namespace db::dist {
namespace {

namespace fs = std::filesystem;

std::vector<int> range(int b, int e) {
  std::vector<int> v;
  for (int i = b; i < e; ++i) v.push_back(i);
  return v;
}

// Two sockets of 8 cores each, hyperthreads numbered as Linux does (node 0: 0-7,16-23).
NumaTopology two_sockets() {
  NumaTopology t;
  std::vector<int> n0 = range(0, 8), n1 = range(8, 16);
  for (int c = 16; c < 24; ++c) n0.push_back(c);
  for (int c = 24; c < 32; ++c) n1.push_back(c);
  t.nodes = {{0, n0, 64ull << 30}, {1, n1, 64ull << 30}};
  return t;
}

TEST(NumaTopology, ParsesCpuLists) {
  EXPECT_EQ(parse_cpu_list("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpu_list("5"), (std::vector<int>{5}));
  EXPECT_TRUE(parse_cpu_list("\n").empty());
  EXPECT_EQ(parse_cpu_list("3,1-2,2"), (std::vector<int>{1, 2, 3}));
  for (const char* bad : {"0-", "-1", "a", "0,,1", "3-1", "0,"}) EXPECT_THROW(parse_cpu_list(bad), Error) << bad;
}

TEST(NumaTopology, ReadsASysfsTree) {
  const fs::path root = fs::temp_directory_path() / ("numa_tree_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const auto node = [&](const std::string& name, const std::string& cpulist, const std::string& meminfo) {
    fs::create_directories(root / name);
    std::ofstream(root / name / "cpulist") << cpulist;
    if (!meminfo.empty()) std::ofstream(root / name / "meminfo") << meminfo;
  };
  node("node1", "4-7\n", "Node 1 MemTotal:       1024 kB\nNode 1 MemFree: 10 kB\n");
  node("node0", "0-3\n", "Node 0 MemTotal:       2048 kB\n");
  node("node2", "\n", "");  // memory-only (e.g. CXL)
  fs::create_directories(root / "power");
  std::ofstream(root / "online") << "0-2\n";
  const NumaTopology t = read_numa_topology({0}, root.string());
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(t.nodes[0].id, 0);
  EXPECT_EQ(t.nodes[0].cpus, range(0, 4));
  EXPECT_EQ(t.nodes[0].memory_bytes, 2048u * 1024);
  EXPECT_EQ(t.nodes[1].cpus, range(4, 8));
  EXPECT_TRUE(t.nodes[2].cpus.empty());
  EXPECT_EQ(t.node_of_cpu(5)->id, 1);
  EXPECT_EQ(t.node_of_cpu(9), nullptr);
  std::ofstream(root / "node1" / "cpulist") << "4-x\n";
  EXPECT_THROW(read_numa_topology({0}, root.string()), Error);
  fs::remove_all(root);
}

TEST(NumaTopology, NoSysfsTreeIsOneNodeOfTheFallbackCpus) {
  const NumaTopology t = read_numa_topology({0, 1, 2}, "/nonexistent/node");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].cpus, range(0, 3));
}

TEST(NumaTopology, ThisMachineHasANodeWithTheAllowedCpus) {
  const std::vector<int> allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const NumaTopology t = read_numa_topology(allowed);
  ASSERT_FALSE(t.nodes.empty());
  EXPECT_NE(t.node_of_cpu(allowed.front()), nullptr);
}

TEST(NumaPlacement, ParsesModes) {
  EXPECT_EQ(numa_mode_from_name("auto"), NumaMode::Auto);
  EXPECT_EQ(numa_mode_from_name("off"), NumaMode::Off);
  EXPECT_EQ(numa_mode_from_name("interleave"), NumaMode::Interleave);
  EXPECT_EQ(numa_mode_from_name("isolate"), NumaMode::Isolate);
  EXPECT_EQ(numa_mode_from_name("replicate"), NumaMode::Replicate);
  EXPECT_THROW(numa_mode_from_name("spread"), Error);
}

TEST(NumaPlacement, OneRankPerSocketTakesItsSocket) {
  const NumaTopology t = two_sockets();
  const auto allowed = range(0, 32);
  const NumaPlacement r0 = plan_numa_placement(t, allowed, NumaMode::Auto, {0, 2}, 0);
  const NumaPlacement r1 = plan_numa_placement(t, allowed, NumaMode::Auto, {1, 2}, 0);
  EXPECT_EQ(r0.cpus, t.nodes[0].cpus);
  EXPECT_EQ(r1.cpus, t.nodes[1].cpus);
  EXPECT_EQ(r0.memory, MemoryPolicy::Preferred);
  EXPECT_EQ(r0.memory_nodes, std::vector<int>{0});
  EXPECT_EQ(r1.memory_nodes, std::vector<int>{1});
  EXPECT_NE(r1.description.find("node 1 of 2 nodes, CPUs 8-15,24-31"), std::string::npos) << r1.description;
}

TEST(NumaPlacement, RanksSharingANodeSplitItsCpus) {
  const NumaTopology t = two_sockets();
  const auto allowed = range(0, 32);
  std::vector<int> seen;
  for (int r = 0; r < 4; ++r) {
    const NumaPlacement p = plan_numa_placement(t, allowed, NumaMode::Auto, {r, 4}, 0);
    EXPECT_EQ(p.memory_nodes, std::vector<int>{r / 2}) << r;
    EXPECT_EQ(p.cpus.size(), 8u) << r;
    seen.insert(seen.end(), p.cpus.begin(), p.cpus.end());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, allowed);  // every CPU used once
  // Three ranks on two nodes: 0 and 1 share node 0, 2 has node 1 alone.
  EXPECT_EQ(plan_numa_placement(t, allowed, NumaMode::Auto, {1, 3}, 0).memory_nodes, std::vector<int>{0});
  EXPECT_EQ(plan_numa_placement(t, allowed, NumaMode::Auto, {2, 3}, 0).cpus, t.nodes[1].cpus);
  // More ranks on a node than it has CPUs: one CPU each, shared round-robin.
  NumaTopology tiny;
  tiny.nodes = {{0, {0, 1}, 0}, {1, {2, 3}, 0}};
  for (int r = 0; r < 6; ++r) {
    const NumaPlacement p = plan_numa_placement(tiny, range(0, 4), NumaMode::Auto, {r, 6}, 0);
    ASSERT_EQ(p.cpus.size(), 1u);
    EXPECT_EQ(p.memory_nodes.front(), r < 3 ? 0 : 1);
    EXPECT_EQ(p.cpus.front() / 2, p.memory_nodes.front());
  }
}

TEST(NumaPlacement, OnlyNodesWithAllowedCpusCount) {
  // A cpuset that allows node 1 only, and a memory-only node: one usable node.
  NumaTopology t = two_sockets();
  t.nodes.push_back({2, {}, 256ull << 30});
  const NumaPlacement p = plan_numa_placement(t, range(8, 16), NumaMode::Auto, {0, 2}, 8);
  EXPECT_FALSE(p.changes_anything());
  EXPECT_NE(p.description.find("one node"), std::string::npos);
  // Three nodes, the memory-only one skipped when interleaving.
  const NumaPlacement i = plan_numa_placement(t, range(0, 32), NumaMode::Interleave, {}, 0);
  EXPECT_EQ(i.memory, MemoryPolicy::Interleave);
  EXPECT_EQ(i.memory_nodes, (std::vector<int>{0, 1}));
  EXPECT_TRUE(i.cpus.empty());
  EXPECT_THROW(plan_numa_placement(t, {40, 41}, NumaMode::Auto, {}, 40), Error);
}

TEST(NumaPlacement, OneProcess) {
  const NumaTopology t = two_sockets();
  const auto allowed = range(0, 32);
  const NumaPlacement a = plan_numa_placement(t, allowed, NumaMode::Auto, {}, 0);
  EXPECT_FALSE(a.changes_anything());
  EXPECT_NE(a.description.find("--numa interleave"), std::string::npos);
  EXPECT_FALSE(plan_numa_placement(t, allowed, NumaMode::Off, {}, 0).changes_anything());
  const NumaPlacement iso = plan_numa_placement(t, allowed, NumaMode::Isolate, {}, 27);
  EXPECT_EQ(iso.cpus, t.nodes[1].cpus);
  EXPECT_EQ(iso.memory_nodes, std::vector<int>{1});
  // Several local processes: interleave and isolate are refused, auto places each.
  EXPECT_THROW(plan_numa_placement(t, allowed, NumaMode::Interleave, {0, 2}, 0), Error);
  EXPECT_THROW(plan_numa_placement(t, allowed, NumaMode::Isolate, {1, 2}, 0), Error);
  EXPECT_FALSE(plan_numa_placement(t, allowed, NumaMode::Off, {1, 2}, 0).changes_anything());
}

// replicate: one copy of the weights per node with usable CPUs (slot 0 the
// first), the process's CPUs unchanged (the pools' workers spread over the
// nodes: util/numa_nodes.h), memory left to first touch.
TEST(NumaPlacement, ReplicateCopiesTheWeightsToEveryNodeWithCpus) {
  NumaTopology t = two_sockets();
  t.nodes.push_back({2, {}, 256ull << 30});  // memory-only: no copy, no thread
  const NumaPlacement p = plan_numa_placement(t, range(0, 32), NumaMode::Replicate, {}, 27);
  EXPECT_TRUE(p.changes_anything());
  ASSERT_EQ(p.replicas.size(), 2u);
  EXPECT_EQ(p.replicas[0].memory_node, 0);
  EXPECT_EQ(p.replicas[0].cpus, t.nodes[0].cpus);
  EXPECT_EQ(p.replicas[1].memory_node, 1);
  EXPECT_EQ(p.replicas[1].cpus, t.nodes[1].cpus);
  EXPECT_TRUE(p.cpus.empty());
  EXPECT_EQ(p.memory, MemoryPolicy::Default);
  EXPECT_NE(p.description.find("a copy of the weights on each of nodes 0-1"), std::string::npos) << p.description;
  EXPECT_NE(p.description.find("KV cache is not replicated"), std::string::npos) << p.description;
  // Four nodes, a cpuset leaving CPUs on nodes 1 and 3 only: those two, with just those CPUs.
  NumaTopology four;
  for (int n = 0; n < 4; ++n) four.nodes.push_back({n, range(4 * n, 4 * n + 4), 0});
  const NumaPlacement q = plan_numa_placement(four, {5, 6, 13}, NumaMode::Replicate, {}, 5);
  ASSERT_EQ(q.replicas.size(), 2u);
  EXPECT_EQ(q.replicas[0].memory_node, 1);
  EXPECT_EQ(q.replicas[0].cpus, (std::vector<int>{5, 6}));
  EXPECT_EQ(q.replicas[1].memory_node, 3);
  EXPECT_EQ(q.replicas[1].cpus, (std::vector<int>{13}));
}

TEST(NumaPlacement, ReplicateOnOneNodeIsOffAndOneOfSeveralRanksIsRefused) {
  NumaTopology t = two_sockets();
  t.nodes.push_back({2, {}, 256ull << 30});
  const NumaPlacement one = plan_numa_placement(t, range(8, 16), NumaMode::Replicate, {}, 8);
  EXPECT_FALSE(one.changes_anything());
  EXPECT_NE(one.description.find("--numa replicate on one node with usable CPUs: one copy of the weights, the same "
                                 "as --numa off"),
            std::string::npos)
      << one.description;
  try {
    plan_numa_placement(t, range(0, 32), NumaMode::Replicate, {1, 2}, 0);
    FAIL() << "replicate accepted for one of two ranks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--numa replicate places one process; this is one of 2 processes"),
              std::string::npos)
        << e.what();
  }
}

TEST(NumaPlacement, LocalRankFromTheLauncher) {
  ::unsetenv("MPI_LOCALRANKID");
  ::unsetenv("MPI_LOCALNRANKS");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(launched_local_rank().size, 1);
  ::setenv("MPI_LOCALRANKID", "1", 1);
  ::setenv("MPI_LOCALNRANKS", "4", 1);
  EXPECT_EQ(launched_local_rank().rank, 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "2", 1);  // Open MPI's names come first
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "3", 1);
  EXPECT_EQ(launched_local_rank().rank, 2);
  EXPECT_EQ(launched_local_rank().size, 3);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_THROW(launched_local_rank(), Error);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "x", 1);
  EXPECT_THROW(launched_local_rank(), Error);
  for (const char* n : {"MPI_LOCALRANKID", "MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"})
    ::unsetenv(n);
}

// On this machine's first node: pin a thread to one allowed CPU and give it a
// memory policy, as a rank would; both are per thread, so a thread of its own.
TEST(NumaApply, PinsAndSetsThePolicyOnThisMachine) {
  const std::vector<int> allowed = allowed_cpus();
  const NumaTopology t = read_numa_topology(allowed);
  const NumaNode* node = t.node_of_cpu(allowed.back());
  ASSERT_NE(node, nullptr);
  for (MemoryPolicy policy : {MemoryPolicy::Preferred, MemoryPolicy::Interleave}) {
    NumaPlacement p;
    p.cpus = {allowed.back()};
    p.memory = policy;
    p.memory_nodes = {node->id};
    std::vector<int> cpus_after;
    AppliedMemoryPolicy mem_after;
    std::string error;
    std::thread([&] {
      try {
        apply_numa_placement(p);
        cpus_after = allowed_cpus();
        mem_after = current_memory_policy();
      } catch (const Error& e) {
        error = e.what();
      }
    }).join();
    ASSERT_EQ(error, "");
    EXPECT_EQ(cpus_after, p.cpus);
    EXPECT_EQ(mem_after.policy, policy);
    EXPECT_EQ(mem_after.nodes, p.memory_nodes);
  }
  EXPECT_EQ(allowed_cpus(), allowed);  // this thread untouched
  NumaPlacement bad;
  bad.cpus = {-1};
  EXPECT_THROW(apply_numa_placement(bad), Error);
}

}  // namespace
}  // namespace db::dist

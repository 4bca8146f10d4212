// Each collective over a real MPI world (run under mpirun -np 2 and -np 4): exact
// results for values every rank can predict, and sums bitwise equal on every rank.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "dist/parallel_groups.h"
#include "mpi_world.h"

namespace db::dist::test {
namespace {

std::byte b(int v) { return static_cast<std::byte>(v & 0xff); }

TEST(MpiAllReduceSum, SumsExactlyAtEverySize) {
  Communicator& w = world();
  const int n = w.size(), r = w.rank();
  for (size_t len : {size_t{0}, size_t{1}, size_t{576}, size_t{100000}}) {
    std::vector<float> v(len);
    for (size_t i = 0; i < len; ++i) v[i] = static_cast<float>(r * 1000 + static_cast<int>(i % 4096));
    w.all_reduce_sum(v);
    for (size_t i = 0; i < len; ++i) {
      const float want = static_cast<float>(1000 * n * (n - 1) / 2 + n * static_cast<int>(i % 4096));
      ASSERT_EQ(v[i], want) << "len " << len << " index " << i;
    }
  }
}

// Tensor-parallel ranks continue from the sums: they must not drift apart.
TEST(MpiAllReduceSum, EveryRankGetsBitwiseTheSameSums) {
  Communicator& w = world();
  for (size_t len : {size_t{7}, size_t{576}, size_t{65536}}) {
    std::mt19937 rng(1234u + static_cast<unsigned>(w.rank()));
    std::normal_distribution<float> dist(0.0f, 3.0f);
    std::vector<float> v(len);
    for (float& x : v) x = dist(rng);
    w.all_reduce_sum(v);
    std::vector<float> all(len * static_cast<size_t>(w.size()));
    all_gather_as<float>(w, v, all);
    for (int k = 1; k < w.size(); ++k)
      ASSERT_EQ(std::memcmp(all.data(), all.data() + len * static_cast<size_t>(k), len * sizeof(float)), 0)
          << "rank " << k << " differs from rank 0 at length " << len;
  }
}

// The groups of a grid of tensor groups of 2 ranks (dist/parallel_groups.h): each split
// group holds the ranks of its color in key order, and its collectives stay within it.
TEST(MpiSplit, GridGroupsHoldTheirRanksInOrder) {
  Communicator& w = world();
  const int tp = 2, ep = w.size() / tp;
  const GridPosition at = grid_position(w.rank(), tp);
  const std::unique_ptr<Communicator> tensor = w.split(at.expert_rank, at.tensor_rank);
  const std::unique_ptr<Communicator> expert = w.split(at.tensor_rank, at.expert_rank);
  ASSERT_EQ(tensor->size(), tp);
  ASSERT_EQ(tensor->rank(), at.tensor_rank);
  ASSERT_EQ(expert->size(), ep);
  ASSERT_EQ(expert->rank(), at.expert_rank);
  const int32_t me = w.rank();
  std::vector<int32_t> members(static_cast<size_t>(tp));
  all_gather_as<int32_t>(*tensor, std::span<const int32_t>(&me, 1), members);
  for (int k = 0; k < tp; ++k) EXPECT_EQ(members[static_cast<size_t>(k)], at.expert_rank * tp + k);
  members.assign(static_cast<size_t>(ep), -1);
  all_gather_as<int32_t>(*expert, std::span<const int32_t>(&me, 1), members);
  for (int k = 0; k < ep; ++k) EXPECT_EQ(members[static_cast<size_t>(k)], k * tp + at.tensor_rank);
}

TEST(MpiAllGather, ConcatenatesInRankOrder) {
  Communicator& w = world();
  for (size_t len : {size_t{0}, size_t{5}, size_t{4096}}) {
    std::vector<std::byte> send(len), recv(len * static_cast<size_t>(w.size()), b(0xee));
    for (size_t i = 0; i < len; ++i) send[i] = b(w.rank() * 31 + static_cast<int>(i));
    w.all_gather(send, recv);
    for (int k = 0; k < w.size(); ++k)
      for (size_t i = 0; i < len; ++i)
        ASSERT_EQ(recv[static_cast<size_t>(k) * len + i], b(k * 31 + static_cast<int>(i))) << "from rank " << k;
  }
}

TEST(MpiAllToAllV, DeliversEachRanksBytesForThisRank) {
  Communicator& w = world();
  const int n = w.size(), r = w.rank();
  // Rank s sends rank d (s + 2 * d) bytes of value (16 s + d): uneven, and empty for s = d = 0.
  std::vector<size_t> send_counts(n), recv_counts(n);
  std::vector<std::byte> send;
  for (int d = 0; d < n; ++d) {
    send_counts[d] = static_cast<size_t>(r + 2 * d);
    send.insert(send.end(), send_counts[d], b(16 * r + d));
  }
  size_t total = 0;
  for (int s = 0; s < n; ++s) total += recv_counts[s] = static_cast<size_t>(s + 2 * r);
  std::vector<std::byte> recv(total, b(0xee));
  w.all_to_all_v(send, send_counts, recv, recv_counts);
  size_t at = 0;
  for (int s = 0; s < n; ++s)
    for (size_t i = 0; i < recv_counts[s]; ++i, ++at) ASSERT_EQ(recv[at], b(16 * s + r)) << "from rank " << s;
}

TEST(MpiBroadcast, EveryRankGetsTheRootsBytesAtAnyLength) {
  Communicator& w = world();
  for (int root = 0; root < w.size(); ++root) {
    for (size_t len : {size_t{0}, size_t{3}, size_t{70000}}) {
      std::vector<std::byte> bytes(w.rank() == root ? len : 11, b(0x55));  // others start with other bytes
      if (w.rank() == root)
        for (size_t i = 0; i < len; ++i) bytes[i] = b(static_cast<int>(i * 7) + root);
      w.broadcast(bytes, root);
      ASSERT_EQ(bytes.size(), len) << "root " << root;
      for (size_t i = 0; i < len; ++i) ASSERT_EQ(bytes[i], b(static_cast<int>(i * 7) + root)) << "root " << root;
    }
  }
}

// A step issues a few hundred small collectives: they stay matched and in order.
TEST(MpiCollectives, ManySmallCallsInARowStayInOrder) {
  Communicator& w = world();
  for (int k = 0; k < 500; ++k) {
    float x = static_cast<float>(k + w.rank());
    w.all_reduce_sum({&x, 1});
    ASSERT_EQ(x, static_cast<float>(w.size() * k + w.size() * (w.size() - 1) / 2)) << "call " << k;
  }
}

// Size errors are the caller's bug: refused before any rank communicates, so the
// group stays usable.
TEST(MpiCollectives, AWrongSizeIsRefusedWithoutBreakingTheGroup) {
  Communicator& w = world();
  std::vector<std::byte> send(4), recv(3);
  EXPECT_THROW(w.all_gather(send, recv), Error);
  const std::vector<size_t> one_count(1, 4);
  EXPECT_THROW(w.all_to_all_v(send, one_count, recv, one_count), Error);
  float x = 1.0f;
  w.all_reduce_sum({&x, 1});
  EXPECT_EQ(x, static_cast<float>(w.size()));
}

}  // namespace
}  // namespace db::dist::test

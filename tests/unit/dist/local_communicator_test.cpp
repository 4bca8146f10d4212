// The group of one: collectives are copies, and a wrong size is an error as it is
// in a group of many.
#include "dist/local_communicator.h"

#include <gtest/gtest.h>

#include <array>
#include <numeric>
#include <vector>

namespace db::dist {
namespace {

TEST(LocalCommunicator, IsRankZeroOfOne) {
  LocalCommunicator c;
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
}

TEST(LocalCommunicator, AllReduceLeavesTheDataAsItIs) {
  LocalCommunicator c;
  std::vector<float> v = {1.5f, -2.0f, 3.25f};
  c.all_reduce_sum(v);
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f, 3.25f}));
}

TEST(LocalCommunicator, AllGatherCopiesItsOwnBlock) {
  LocalCommunicator c;
  const std::array<int32_t, 3> send = {7, 8, 9};
  std::array<int32_t, 3> recv{};
  all_gather_as<int32_t>(c, send, recv);
  EXPECT_EQ(recv, send);
  std::array<int32_t, 4> too_big{};
  EXPECT_THROW(all_gather_as<int32_t>(c, send, too_big), Error);
}

TEST(LocalCommunicator, AllToAllVCopiesWhatItSendsItself) {
  LocalCommunicator c;
  std::vector<std::byte> send(5), recv(5);
  std::iota(reinterpret_cast<unsigned char*>(send.data()), reinterpret_cast<unsigned char*>(send.data()) + 5, 1);
  const std::array<size_t, 1> counts = {5};
  c.all_to_all_v(send, counts, recv, counts);
  EXPECT_EQ(recv, send);
  const std::array<size_t, 1> other = {4};
  EXPECT_THROW(c.all_to_all_v(send, counts, recv, other), Error);
}

TEST(LocalCommunicator, BroadcastFromRankZeroKeepsTheBytes) {
  LocalCommunicator c;
  std::vector<std::byte> bytes(3, std::byte{42});
  c.broadcast(bytes, 0);
  EXPECT_EQ(bytes, std::vector<std::byte>(3, std::byte{42}));
  EXPECT_THROW(c.broadcast(bytes, 1), Error);
}

TEST(CollectiveName, NamesEveryOp) {
  EXPECT_STREQ(collective_name(CollectiveOp::AllReduceSum), "all_reduce_sum");
  EXPECT_STREQ(collective_name(CollectiveOp::AllGather), "all_gather");
  EXPECT_STREQ(collective_name(CollectiveOp::AllToAllV), "all_to_all_v");
  EXPECT_STREQ(collective_name(CollectiveOp::Broadcast), "broadcast");
}

}  // namespace
}  // namespace db::dist

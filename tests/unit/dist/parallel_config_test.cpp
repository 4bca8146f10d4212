// The parallel sizes against the build and the launched world: each wrong
// combination is refused with a message naming the option and the way out.
#include "dist/parallel_config.h"

#include <gtest/gtest.h>

#include <string>

#include "error_of.h"

namespace db::dist {
namespace {

std::string error_of(const ParallelConfig& p, int world, bool with_mpi) {
  return test::error_of([&] { check_parallel_config(p, world, with_mpi); });
}

ParallelConfig sizes(int tp, int ep) {
  ParallelConfig p;
  p.tensor_parallel_size = tp;
  p.expert_parallel_size = ep;
  return p;
}

TEST(ParallelConfig, OneProcessNeedsNothing) {
  EXPECT_EQ(error_of(sizes(1, 1), 1, false), "");
  EXPECT_EQ(error_of(sizes(1, 1), 1, true), "");
  EXPECT_EQ(sizes(2, 3).ranks(), 6);
}

TEST(ParallelConfig, MatchingWorldWithMpiIsAccepted) {
  EXPECT_EQ(error_of(sizes(2, 1), 2, true), "");
  EXPECT_EQ(error_of(sizes(2, 2), 4, true), "");
}

TEST(ParallelConfig, ABuildWithoutMpiSaysSo) {
  const std::string e = error_of(sizes(2, 1), 1, false);
  EXPECT_NE(e.find("--tensor-parallel-size 2"), std::string::npos) << e;
  EXPECT_NE(e.find("this build of deepbatch has no MPI"), std::string::npos) << e;
  EXPECT_NE(e.find("libopenmpi-dev"), std::string::npos) << e;
  EXPECT_NE(error_of(sizes(1, 4), 4, false).find("has no MPI"), std::string::npos);
}

TEST(ParallelConfig, SizesMustMatchTheWorld) {
  const std::string e = error_of(sizes(2, 1), 1, true);
  EXPECT_NE(e.find("= 2 ranks, but the job has 1 process"), std::string::npos) << e;
  EXPECT_NE(e.find("mpirun -np 2"), std::string::npos) << e;
  const std::string launched = error_of(sizes(1, 1), 2, true);
  EXPECT_NE(launched.find("= 1 rank, but the job has 2 processes"), std::string::npos) << launched;
  EXPECT_NE(error_of(sizes(2, 2), 2, true).find("= 4 ranks"), std::string::npos);
}

TEST(ParallelConfig, NonPositiveValuesAreRefused) {
  EXPECT_NE(error_of(sizes(0, 1), 1, true).find("--tensor-parallel-size must be at least 1"), std::string::npos);
  EXPECT_NE(error_of(sizes(1, -2), 1, true).find("--expert-parallel-size must be at least 1"), std::string::npos);
  ParallelConfig p;
  p.collective_timeout_s = 0;
  EXPECT_NE(error_of(p, 1, true).find("--collective-timeout must be a positive"), std::string::npos);
}

}  // namespace
}  // namespace db::dist

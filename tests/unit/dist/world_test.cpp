// The launched world from the launcher's environment, read without touching MPI.
#include "dist/world.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace db::dist {
namespace {

// Sets the launcher's variables for one test and restores their absence after.
class LauncherEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(LauncherEnv, NoLauncherMeansOneProcess) { EXPECT_EQ(launched_world_size(), 1); }

TEST_F(LauncherEnv, ReadsOpenMpiThenPmi) {
  setenv("PMI_SIZE", "3", 1);
  EXPECT_EQ(launched_world_size(), 3);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  EXPECT_EQ(launched_world_size(), 4);
}

TEST_F(LauncherEnv, ANonNumberIsAnError) {
  setenv("OMPI_COMM_WORLD_SIZE", "two", 1);
  EXPECT_THROW(launched_world_size(), Error);
  setenv("OMPI_COMM_WORLD_SIZE", "0", 1);
  EXPECT_THROW(launched_world_size(), Error);
}

TEST_F(LauncherEnv, OneProcessGetsTheLocalGroupWithoutMpi) {
  auto world = open_world({});
  EXPECT_EQ(world->size(), 1);
  EXPECT_EQ(world->rank(), 0);
}

TEST_F(LauncherEnv, SeveralProcessesInABuildWithoutMpiAreRefused) {
  if (built_with_mpi()) GTEST_SKIP() << "this build has MPI: the MPI tests (label mpi) open real worlds";
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  try {
    open_world({});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("launched as 2 processes, but this build of deepbatch has no MPI"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace db::dist

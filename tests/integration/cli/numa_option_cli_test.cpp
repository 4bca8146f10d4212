// --numa on the command line: the placement is made before the model is opened,
// and a mode that does not fit the launch is refused there with a clear message.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "cli_test_util.h"

namespace db::test {
namespace {

CliResult generate_with(const std::vector<std::string>& extra) {
  const std::string dir = make_temp_dir("numa_option_cli");
  std::vector<std::string> args = {"generate", "-m", dir + "/never-loaded.gguf", "-p", "hi", "-n", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_deepbatch(args);
}

TEST(NumaOptionCli, ThePlacementComesBeforeTheModel) {
  const CliResult r = generate_with({"--numa", "off"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the model file does not exist
  const size_t placed = r.err.find("NUMA: --numa off"), opened = r.err.find("never-loaded.gguf");
  ASSERT_NE(placed, std::string::npos) << r.err;
  ASSERT_NE(opened, std::string::npos) << r.err;
  EXPECT_LT(placed, opened) << r.err;
}

TEST(NumaOptionCli, OnePlacementPerProcessIsRefusedToOneOfSeveralRanks) {
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  const CliResult interleave = generate_with({"--numa", "interleave"});
  const CliResult replicate = generate_with({"--numa", "replicate"});
  const CliResult automatic = generate_with({});
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(interleave.exit_code, 1);
  EXPECT_NE(interleave.err.find("--numa interleave places one process; this is one of 2 processes"),
            std::string::npos)
      << interleave.err;
  EXPECT_EQ(interleave.err.find("never-loaded.gguf"), std::string::npos) << "the model was opened";
  EXPECT_EQ(replicate.exit_code, 1);
  EXPECT_NE(replicate.err.find("--numa replicate places one process; this is one of 2 processes"), std::string::npos)
      << replicate.err;
  EXPECT_EQ(automatic.err.find("--numa"), std::string::npos) << automatic.err;  // auto goes on to the model
  EXPECT_NE(automatic.err.find("never-loaded.gguf"), std::string::npos) << automatic.err;
}

// This machine's usable CPUs may all be on one node: then the line says that
// replicate is the same as off there; on several, which nodes get a copy.
TEST(NumaOptionCli, ReplicateSaysWhatItDoesBeforeTheModel) {
  const CliResult r = generate_with({"--numa", "replicate"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the model file does not exist
  const size_t placed = r.err.find("NUMA: --numa replicate"), opened = r.err.find("never-loaded.gguf");
  ASSERT_NE(placed, std::string::npos) << r.err;
  EXPECT_LT(placed, opened) << r.err;
  const bool one_node = r.err.find("on one node with usable CPUs: one copy of the weights, the same as --numa off") !=
                        std::string::npos;
  const bool copies = r.err.find("a copy of the weights on each of nodes") != std::string::npos;
  EXPECT_TRUE(one_node != copies) << r.err;
}

TEST(NumaOptionCli, AnUnknownModeIsRefused) {
  const CliResult r = generate_with({"--numa", "spread"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--numa: spread not in {auto,off,interleave,isolate,replicate}"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace db::test

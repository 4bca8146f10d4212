// --tensor-parallel-size / --expert-parallel-size on the command line: refused before
// the model loads, with a message that says what to do: in a build without MPI, that
// the build has none; with MPI, how to launch the ranks the sizes ask for.
#include <gtest/gtest.h>

#include <fstream>

#include "cli_test_util.h"
#include "dist/world.h"

namespace db::test {
namespace {

CliResult run_with(const std::vector<std::string>& extra) {
  const std::string dir = make_temp_dir("parallel_options_cli");
  std::ofstream(dir + "/in.jsonl") << R"({"custom_id": "a", "method": "POST", "url": "/v1/completions", )"
                                   << R"("body": {"model": "m", "prompt": "hi", "max_tokens": 1}})" << "\n";
  std::vector<std::string> args = {"run", "-m", dir + "/never-loaded.gguf", "-i", dir + "/in.jsonl", "-o",
                                   dir + "/out.jsonl"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_deepbatch(args);
}

TEST(ParallelOptionsCli, SizesAboveOneOutsideMpirunAreRefusedClearly) {
  const CliResult r = run_with({"--tensor-parallel-size", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  if (dist::built_with_mpi()) {
    EXPECT_NE(r.err.find("= 2 ranks, but the job has 1 process: launch it with mpirun -np 2"), std::string::npos)
        << r.err;
  } else {
    EXPECT_NE(r.err.find("this build of deepbatch has no MPI"), std::string::npos) << r.err;
  }
  EXPECT_EQ(r.err.find("never-loaded.gguf"), std::string::npos) << "the model was opened: " << r.err;
}

TEST(ParallelOptionsCli, ExpertParallelSizeIsCheckedToo) {
  const CliResult r = run_with({"--expert-parallel-size", "4"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--expert-parallel-size 4"), std::string::npos) << r.err;
}

TEST(ParallelOptionsCli, ANonPositiveTimeoutIsRefused) {
  const CliResult r = run_with({"--collective-timeout", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--collective-timeout must be a positive number of seconds"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace db::test

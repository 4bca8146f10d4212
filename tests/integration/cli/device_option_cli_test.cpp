// --device on the command line: cuda, where this build or machine cannot compute
// there, stops before the model loads with exit status 1 and the reason (no CUDA in
// the build: how to configure one; no device: CUDA's words), never a crash; on a
// machine with a CUDA device the model loads onto it. Options the CUDA backend does
// not take are refused by name.
#include <gtest/gtest.h>

#include <fstream>

#include "backend/backend_device.h"
#include "cli_test_util.h"
#include "error_of.h"
#include "util/error.h"

namespace db::test {
namespace {

const std::string kModel = std::string(DB_TEST_DATA) + "/model/llama_tiny/model-f16.gguf";

CliResult run_with(const std::vector<std::string>& extra) {
  const std::string dir = make_temp_dir("device_option_cli");
  std::ofstream(dir + "/in.jsonl") << R"({"custom_id": "a", "method": "POST", "url": "/v1/completions", )"
                                   << R"("body": {"model": "m", "prompt": "hello", "max_tokens": 4}})" << "\n";
  std::vector<std::string> args = {"run", "-m", kModel, "-i", dir + "/in.jsonl", "-o", dir + "/out.jsonl"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_deepbatch(args);
}

TEST(DeviceOptionCli, CudaWithoutADeviceOrBuildStopsWithTheReason) {
  const std::string why = device_unavailable_reason(Device::Cuda);
  const CliResult r = run_with({"--device", "cuda"});
  if (why.empty()) {  // a CUDA device: the model loads onto it (the fixture has no tokenizer to run with)
    EXPECT_EQ(r.err.find("CUDA"), std::string::npos) << r.err;
    return;
  }
  EXPECT_TRUE(why.rfind("no CUDA device: ", 0) == 0 ||
              why == "this build has no CUDA support: configure with -DDB_CUDA=ON")
      << why;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("deepbatch: error: --device cuda: " + why), std::string::npos) << r.err;
}

TEST(DeviceOptionCli, AnUnknownDeviceIsRefused) {
  const CliResult r = run_with({"--device", "tpu"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
}

TEST(DeviceOptionCli, PackIsRefusedWithCuda) {
  if (!device_unavailable_reason(Device::Cuda).empty()) GTEST_SKIP() << device_unavailable_reason(Device::Cuda);
  const CliResult r = run_with({"--device", "cuda", "--pack"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("drop --pack"), std::string::npos) << r.err;
}

TEST(BackendDevice, AKvBudgetNeedsADeviceBackendAndAShareInRange) {
  const auto cpu = make_backend(Device::Cpu);
  EXPECT_NE(error_of([&] { device_kv_budget(*cpu, 0.9); }).find("backend cpu has no device memory"),
            std::string::npos);
  EXPECT_NE(error_of([&] { device_kv_budget(*cpu, 1.5); }).find("--gpu-memory-utilization must be in (0, 1]"),
            std::string::npos);
  if (device_unavailable_reason(Device::Cuda).empty()) {
    const auto cuda = make_backend(Device::Cuda);
    EXPECT_GT(device_kv_budget(*cuda, 0.9), 0);
  }
}

TEST(BackendDevice, NamesAndRefusals) {
  EXPECT_EQ(device_from_name("cpu"), Device::Cpu);
  EXPECT_EQ(device_from_name("cuda"), Device::Cuda);
  EXPECT_THROW(device_from_name("gpu"), Error);
  EXPECT_STREQ(make_backend(Device::Cpu)->name(), "cpu");
  const std::string why = device_unavailable_reason(Device::Cuda);
  if (why.empty()) {
    EXPECT_STREQ(make_backend(Device::Cuda)->name(), "cuda");
    return;
  }
  try {
    make_backend(Device::Cuda);
    ADD_FAILURE() << "make_backend(Cuda) built a backend without a device";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

}  // namespace
}  // namespace db::test

// The CUDA kernels against the CPU kernels (cuda_cases.h); each case skips, saying why,
// where no CUDA device is present. CudaRuntime.* runs everywhere.
#include <gtest/gtest.h>

#include "cuda_cases.h"
#include "kernels/cuda/runtime.h"
#include "util/error.h"

namespace db::cuda_test {
namespace {

namespace gpu = db::kernels::cuda;

}  // namespace

// Names a case in test output (instead of its bytes).
void PrintTo(const CudaCase& c, std::ostream* os) { *os << c.name; }

namespace {

TEST(CudaRuntime, ReportsNoDeviceCleanlyOrDescribesIt) {
  const std::string why = gpu::unavailable_reason();
  if (why.empty()) {
    const gpu::DeviceInfo info = gpu::device_info();
    EXPECT_GT(info.sm_count, 0);
    EXPECT_GT(info.memory_bandwidth_gbs, 0.0);
    gpu::DeviceBuffer b(64);
    EXPECT_EQ(b.bytes(), 64u);
    return;
  }
  EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
  try {
    gpu::DeviceBuffer b(64);
    ADD_FAILURE() << "allocated device memory without a device";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_THROW(gpu::Stream(), Error);
  EXPECT_THROW(gpu::device_info(), Error);
}

class CudaKernel : public testing::TestWithParam<CudaCase> {};

TEST_P(CudaKernel, MatchesTheCpuKernel) {
  const std::string why = gpu::unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::string failure = GetParam().run();
  EXPECT_EQ(failure, "");
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaKernel, testing::ValuesIn(cuda_cases()),
                         [](const testing::TestParamInfo<CudaCase>& info) { return info.param.name; });

}  // namespace
}  // namespace db::cuda_test

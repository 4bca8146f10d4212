// The CUDA kernels against the CPU kernels (cuda_cases.h); each case skips, saying why,
// where no CUDA device is present. CudaRuntime.*, CudaUpload.*, CudaAttentionIndex.* and
// CudaCaseCompare.* run everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "cuda_cases.h"
#include "error_of.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/matmul.h"
#include "kernels/cuda/runtime.h"
#include "util/error.h"

namespace db::cuda_test {
namespace {

namespace gpu = db::kernels::cuda;
using kernels::AttentionQueries;
using test::error_of;

}  // namespace

// Names a case in test output (instead of its bytes).
void PrintTo(const CudaCase& c, std::ostream* os) { *os << c.name; }

namespace {

TEST(CudaRuntime, ReportsNoDeviceCleanlyOrDescribesIt) {
  const std::string why = gpu::unavailable_reason();
  if (why.empty()) {
    const gpu::DeviceInfo info = gpu::device_info();
    EXPECT_GT(info.sm_count, 0);
    EXPECT_GT(info.total_memory, 0u);
    EXPECT_GE(info.memory_bandwidth_gbs, 0.0);
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

// Checked on the host before any device call, so these run everywhere.
TEST(CudaUpload, RefusesMatricesTheKernelsCannotRead) {
  const std::vector<uint8_t> bytes(4096);
  EXPECT_NE(error_of([&] { gpu::upload_matrix(DType::Q4_1, bytes.data(), 4, 64); }).find("unsupported weight type Q4_1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { gpu::upload_matrix(DType::Q4_K, bytes.data(), 4, 32); }).find("a multiple of 256"),
            std::string::npos);
  EXPECT_NE(error_of([&] { gpu::upload_matrix(DType::Q8_0, bytes.data(), 4, 48); }).find("a multiple of 32"),
            std::string::npos);
}

TEST(CudaAttentionIndex, RefusesBlockTablesThatDoNotFit) {
  const std::vector<int32_t> query_start = {0, 1}, positions = {16};
  std::vector<std::vector<int32_t>> tables = {{0}};
  const AttentionQueries queries{nullptr, 1, 1, query_start.data(), positions.data(), tables.data(), 16, 1.0f};
  EXPECT_NE(error_of([&] { gpu::upload_attention_index(queries, 64); }).find("does not cover position 16"),
            std::string::npos);
  tables[0] = {0, 4};  // slots 64..80 of a 64-slot cache
  EXPECT_NE(error_of([&] { gpu::upload_attention_index(queries, 64); }).find("names block 4 outside the cache"),
            std::string::npos);
}

TEST(CudaCaseCompare, FailsOnAnElementOutsideItsToleranceOrNaN) {
  const std::vector<float> want = {1.0f, 2.0f, 3.0f};
  const std::vector<double> tol = {0.1, 0.1, 0.1};
  EXPECT_TRUE(compare("x", {1.05f, 2.0f, 2.95f}, want, tol).passed);
  const CaseResult off = compare("x", {1.0f, 2.2f, 3.0f}, want, tol);
  EXPECT_FALSE(off.passed);
  EXPECT_NE(off.detail.find("element 1"), std::string::npos) << off.detail;
  EXPECT_FALSE(compare("x", {1.0f, std::nanf(""), 3.0f}, want, tol).passed);
  EXPECT_FALSE(compare("x", {1.0f, 2.0f}, want, tol).passed);
}

class CudaKernel : public testing::TestWithParam<CudaCase> {};

TEST_P(CudaKernel, MatchesTheCpuKernel) {
  const std::string why = gpu::unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  const CaseResult r = GetParam().run();
  EXPECT_TRUE(r.passed) << r.detail;
  if (r.passed) std::printf("%s\n", r.detail.c_str());
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaKernel, testing::ValuesIn(cuda_cases()),
                         [](const testing::TestParamInfo<CudaCase>& info) { return info.param.name; });

}  // namespace
}  // namespace db::cuda_test

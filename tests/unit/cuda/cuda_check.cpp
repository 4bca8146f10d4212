// The CUDA cases (cuda_cases.h) without GTest, for machines that have a GPU but not
// the test dependencies (scripts/gpu_check.sh). Prints PASS / FAIL per case; exit
// status 1 if any failed. Without a device it prints why and exits 0, or 1 with
// --require-device.
#include <cstdio>
#include <cstring>
#include <exception>

#include "cuda_cases.h"
#include "kernels/cuda/runtime.h"

int main(int argc, char** argv) {
  const bool require = argc > 1 && std::strcmp(argv[1], "--require-device") == 0;
  const std::string why = db::kernels::cuda::unavailable_reason();
  if (!why.empty()) {
    std::printf("SKIP all CUDA cases: %s\n", why.c_str());
    return require ? 1 : 0;
  }
  int failed = 0, total = 0;
  for (const auto& c : db::cuda_test::cuda_cases()) {
    ++total;
    db::cuda_test::CaseResult r;
    try {
      r = c.run();
    } catch (const std::exception& e) {
      r = {false, std::string("threw: ") + e.what()};
    }
    if (!r.passed) ++failed;
    std::printf("%s %s: %s\n", r.passed ? "PASS" : "FAIL", c.name.c_str(), r.detail.c_str());
    std::fflush(stdout);
  }
  std::printf("%d of %d CUDA cases passed\n", total - failed, total);
  return failed == 0 ? 0 : 1;
}

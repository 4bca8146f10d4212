// The CUDA kernels' checks against the CPU kernels, as plain functions, so that the
// gtest binary (ctest label cuda) and the dependency-free cuda_check runner of
// scripts/gpu_check.sh run the same cases. Each needs a CUDA device.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace db::cuda_test {

// passed: every element of the device's result is within its tolerance of the CPU's.
// detail: the first element that is not, or how close the worst one came.
struct CaseResult {
  bool passed = false;
  std::string detail;
};

struct CudaCase {
  std::string name;
  std::function<CaseResult()> run;
};

// Every case: the kernels' (cuda_cases.cpp), then the CUDA backend's ops against the
// CPU backend's (cuda_backend_cases.cpp).
std::vector<CudaCase> cuda_cases();
std::vector<CudaCase> cuda_backend_cases();

// The check every case ends with: got (the device's result) against want (the CPU's),
// element i within tol[i]; a NaN never passes.
CaseResult compare(const std::string& what, const std::vector<float>& got, const std::vector<float>& want,
                   const std::vector<double>& tol);

// n normal floats of standard deviation sigma, the same for the same seed.
std::vector<float> normal_floats(size_t n, uint64_t seed, float sigma = 1.0f);
// Element i's tolerance: rel * |want[i]| + abs.
std::vector<double> relative_tol(const std::vector<float>& want, double rel, double abs);

}  // namespace db::cuda_test

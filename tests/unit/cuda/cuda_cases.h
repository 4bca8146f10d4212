// The CUDA kernels' checks against the CPU kernels, as plain functions, so that the
// gtest binary (ctest label cuda) and the dependency-free cuda_check runner of
// scripts/gpu_check.sh run the same cases. Each needs a CUDA device.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace db::cuda_test {

struct CudaCase {
  std::string name;
  // "" when the device's result matches the CPU's within the tolerance, else what differed.
  std::function<std::string()> run;
};

std::vector<CudaCase> cuda_cases();

}  // namespace db::cuda_test

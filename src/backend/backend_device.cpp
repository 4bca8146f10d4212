#include "backend/backend_device.h"

#include <string>

#include "backend/cpu_backend.h"
#include "util/error.h"

#if defined(DB_HAVE_CUDA_BACKEND)
#include "backend/cuda_backend.h"
#include "kernels/cuda/runtime.h"
#endif

namespace db {

Device device_from_name(const std::string& name) {
  if (name == "cpu") return Device::Cpu;
  if (name == "cuda") return Device::Cuda;
  throw Error("unknown device '" + name + "': expected cpu or cuda");
}

const char* device_name(Device d) { return d == Device::Cuda ? "cuda" : "cpu"; }

std::string device_unavailable_reason(Device d) {
  if (d == Device::Cpu) return "";
#if defined(DB_HAVE_CUDA_BACKEND)
  return kernels::cuda::unavailable_reason();
#else
  return "this build has no CUDA support: configure with -DDB_CUDA=ON";
#endif
}

int64_t device_kv_budget(const ComputeBackend& b, double utilization) {
  if (!(utilization > 0 && utilization <= 1))
    throw Error("--gpu-memory-utilization must be in (0, 1], got " + std::to_string(utilization));
#if defined(DB_HAVE_CUDA_BACKEND)
  if (std::string(b.name()) == "cuda") {
    size_t free_bytes = 0, total_bytes = 0;
    kernels::cuda::memory_info(&free_bytes, &total_bytes);
    const double used = static_cast<double>(total_bytes - free_bytes);
    const auto budget = static_cast<int64_t>(utilization * static_cast<double>(total_bytes) - used);
    if (budget <= 0)
      throw Error("no device memory left for the KV cache: " + std::to_string(total_bytes >> 20) + " MiB in all, " +
                  std::to_string(static_cast<int64_t>(used) >> 20) + " MiB in use; raise --gpu-memory-utilization");
    return budget;
  }
#endif
  throw Error(std::string("device_kv_budget: backend ") + b.name() + " has no device memory");
}

std::unique_ptr<ComputeBackend> make_backend(Device d) {
  const std::string why = device_unavailable_reason(d);
  if (!why.empty()) throw Error(why);
#if defined(DB_HAVE_CUDA_BACKEND)
  if (d == Device::Cuda) return std::make_unique<CudaBackend>();
#endif
  return std::make_unique<CpuBackend>();
}

}  // namespace db

#include "backend/backend_device.h"

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

std::unique_ptr<ComputeBackend> make_backend(Device d) {
  const std::string why = device_unavailable_reason(d);
  if (!why.empty()) throw Error(why);
#if defined(DB_HAVE_CUDA_BACKEND)
  if (d == Device::Cuda) return std::make_unique<CudaBackend>();
#endif
  return std::make_unique<CpuBackend>();
}

}  // namespace db

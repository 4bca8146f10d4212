#include "kernels/cuda/runtime.h"

#include <utility>

#include "kernels/cuda/check.cuh"

namespace db::kernels::cuda {

std::string unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();  // the error is not sticky: clear it so later calls start clean
    return std::string("no CUDA device: ") + cudaGetErrorString(e);
  }
  if (n == 0) return "no CUDA device: cudaGetDeviceCount reports 0 devices";
  return "";
}

void require_device() {
  const std::string why = unavailable_reason();
  if (!why.empty()) throw Error(why);
}

DeviceInfo device_info() {
  require_device();
  DeviceInfo info;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.total_memory = prop.totalGlobalMem;
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) != cudaSuccess) {
    cudaGetLastError();  // a driver that does not report them: the bandwidth stays 0 (unknown)
    clock_khz = bus_bits = 0;
  }
  info.memory_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  return info;
}

void* device_alloc_zeroed(size_t bytes) {
  require_device();
  void* p = nullptr;
  if (bytes == 0) return nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  const cudaError_t e = cudaMemset(p, 0, bytes);
  if (e != cudaSuccess) cudaFree(p);
  check(e, "cudaMemset");
  return p;
}

void device_free(void* p) noexcept {
  if (p) cudaFree(p);
}

void copy_host_to_device(void* dst, const void* host_src, size_t bytes) {
  if (bytes > 0) check(cudaMemcpy(dst, host_src, bytes, cudaMemcpyHostToDevice), "copy to device");
}

void copy_device_to_host(void* host_dst, const void* src, size_t bytes) {
  if (bytes > 0) check(cudaMemcpy(host_dst, src, bytes, cudaMemcpyDeviceToHost), "copy to host");
}

void copy_device_to_device(void* dst, const void* src, size_t bytes) {
  if (bytes > 0) check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice), "copy on device");
}

void memory_info(size_t* free_bytes, size_t* total_bytes) {
  require_device();
  check(cudaMemGetInfo(free_bytes, total_bytes), "cudaMemGetInfo");
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  require_device();
  if (bytes > 0) check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void* src, size_t bytes, size_t offset) {
  DB_CHECK(offset + bytes <= bytes_, "DeviceBuffer::upload past the end");
  if (bytes > 0) check(cudaMemcpy(static_cast<char*>(ptr_) + offset, src, bytes, cudaMemcpyHostToDevice), "upload");
}

void DeviceBuffer::download(void* dst, size_t bytes, size_t offset) const {
  DB_CHECK(offset + bytes <= bytes_, "DeviceBuffer::download past the end");
  if (bytes > 0)
    check(cudaMemcpy(dst, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost), "download");
}

Stream::Stream() {
  require_device();
  cudaStream_t s = nullptr;
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  handle_ = s;
}

Stream::~Stream() {
  if (handle_) cudaStreamDestroy(stream_of(handle_));
}

void Stream::synchronize() { check(cudaStreamSynchronize(stream_of(handle_)), "cudaStreamSynchronize"); }

}  // namespace db::kernels::cuda

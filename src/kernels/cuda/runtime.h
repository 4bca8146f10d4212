// The CUDA runtime as the kernels use it: device query, device memory, a stream.
// Every failure is a db::Error carrying CUDA's error string. The runtime is linked
// statically, so on a machine without a GPU or driver these calls report
// "no CUDA device: <reason>" instead of failing to start. No CUDA header is needed
// to include this file.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace db::kernels::cuda {

// "" when device 0 is usable, else "no CUDA device: <CUDA's reason>".
std::string unavailable_reason();
// Throws db::Error with unavailable_reason() unless device 0 is usable.
void require_device();

struct DeviceInfo {
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  size_t total_memory = 0;           // bytes
  double memory_bandwidth_gbs = 0;   // peak: 2 (DDR) * memory clock * bus width, 1e9 bytes/s;
                                     // 0 where the driver does not report them
};
// Device 0's properties (cudaDeviceGetAttribute); requires a device.
DeviceInfo device_info();

// Raw device memory for owners of their own (the compute backend's buffers, the KV
// pool): device_alloc_zeroed gives `bytes` zeroed, device_free takes it back. The
// copies are synchronous, like DeviceBuffer's. memory_free/total: cudaMemGetInfo.
void* device_alloc_zeroed(size_t bytes);
void device_free(void* p) noexcept;
void copy_host_to_device(void* dst, const void* host_src, size_t bytes);
void copy_device_to_host(void* host_dst, const void* src, size_t bytes);
void copy_device_to_device(void* dst, const void* src, size_t bytes);
void memory_info(size_t* free_bytes, size_t* total_bytes);

// `bytes` of device memory, freed on destruction; move-only. Copies are synchronous
// and ordered after all work already launched on any Stream (blocking streams).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void upload(const void* src, size_t bytes, size_t offset = 0);
  void download(void* dst, size_t bytes, size_t offset = 0) const;
  size_t bytes() const { return bytes_; }
  void* data() { return ptr_; }
  const void* data() const { return ptr_; }
  template <class T>
  T* as() { return static_cast<T*>(ptr_); }
  template <class T>
  const T* as() const { return static_cast<const T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A device copy of a host array.
template <class T>
DeviceBuffer to_device(const std::vector<T>& host) {
  DeviceBuffer b(host.size() * sizeof(T));
  b.upload(host.data(), b.bytes());
  return b;
}
// The first n elements of a device array, copied to the host (e.g. logits for the sampler).
template <class T>
std::vector<T> to_host(const DeviceBuffer& b, size_t n) {
  std::vector<T> host(n);
  b.download(host.data(), n * sizeof(T));
  return host;
}

// A CUDA stream (blocking with respect to the legacy default stream); kernels launched
// on it run in launch order.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void* handle() const { return handle_; }  // a cudaStream_t
  // Waits for everything launched on it; throws the first asynchronous error.
  void synchronize();

 private:
  void* handle_ = nullptr;
};

}  // namespace db::kernels::cuda

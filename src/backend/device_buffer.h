// Activation memory that belongs to a compute backend (backend/compute_backend.h):
// host memory for the CPU backend, device memory for an accelerator. The model
// reaches it only through the backend's ops and copies; data() is an address in
// the backend's memory, to be handed back to that backend.
#pragma once
#include <cstdint>

namespace db {

class ComputeBackend;

// Move-only; grown by ComputeBackend::grow, freed by the backend that grew it,
// which must outlive the buffer.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  float* data() const { return data_; }
  int64_t size() const { return size_; }  // floats

 private:
  friend class ComputeBackend;
  void reset() noexcept;

  ComputeBackend* owner_ = nullptr;
  float* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace db

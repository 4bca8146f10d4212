#include "backend/compute_backend.h"

#include <string>
#include <utility>

#include "util/error.h"

namespace db {

void ComputeBackend::grow(DeviceBuffer& b, int64_t n) {
  if (b.owner_ != nullptr && b.owner_ != this)
    throw Error(std::string("a buffer of backend ") + b.owner_->name() + " grown by backend " + name());
  if (b.size_ >= n) return;
  DeviceBuffer bigger;
  bigger.owner_ = this;
  bigger.data_ = allocate(n);
  bigger.size_ = n;
  if (b.size_ > 0) copy_rows(b.data_, b.size_, bigger.data_, n, 1, b.size_);
  b = std::move(bigger);
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (data_ != nullptr) owner_->release(data_);
  owner_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

}  // namespace db

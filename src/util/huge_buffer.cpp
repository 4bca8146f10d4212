#include "util/huge_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <new>
#include <utility>

namespace db {

namespace {

size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

}  // namespace

HugeBuffer::HugeBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const bool huge = bytes >= kHugePage;
  const size_t align = huge ? kHugePage : page;
  mapped_ = round_up(bytes, align);
  // Map enough to find an aligned start, then give back the ends.
  const size_t reserve = mapped_ + (huge ? kHugePage : 0);
  void* map = ::mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::bad_alloc();
  auto* start = static_cast<uint8_t*>(map);
  data_ = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(start), align));
  const size_t head = static_cast<size_t>(data_ - start), tail = reserve - head - mapped_;
  if (head > 0) ::munmap(start, head);
  if (tail > 0) ::munmap(data_ + mapped_, tail);
#if defined(MADV_HUGEPAGE)
  if (huge) ::madvise(data_, mapped_, MADV_HUGEPAGE);  // advice only: without THP it is ignored
#endif
}

HugeBuffer::~HugeBuffer() { release(); }

HugeBuffer::HugeBuffer(HugeBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

HugeBuffer& HugeBuffer::operator=(HugeBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

void HugeBuffer::release() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
  data_ = nullptr, bytes_ = 0, mapped_ = 0;
}

}  // namespace db

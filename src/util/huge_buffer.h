// Zero-filled memory for the large arrays the kernels stream every step (packed
// weights, the KV cache). It is an anonymous mapping, committed by the OS as it
// is touched, 2 MB aligned and advised for transparent huge pages (which Linux's
// default "madvise" mode gives only on request): in 4 KB pages a streamed array
// costs a TLB miss per page, and the hardware prefetchers stop at every page
// boundary.
#pragma once
#include <cstddef>
#include <cstdint>

namespace db {

class HugeBuffer {
 public:
  static constexpr size_t kHugePage = size_t{2} << 20;

  HugeBuffer() = default;
  // `bytes` zero bytes (none for 0); throws std::bad_alloc when the OS refuses the mapping.
  explicit HugeBuffer(size_t bytes);
  ~HugeBuffer();
  HugeBuffer(HugeBuffer&& other) noexcept;
  HugeBuffer& operator=(HugeBuffer&& other) noexcept;
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  void release();

  uint8_t* data_ = nullptr;  // 2 MB aligned from 2 MB up, else page aligned
  size_t bytes_ = 0;
  size_t mapped_ = 0;  // bytes mapped from data_: bytes_ rounded up to whole (huge) pages
};

}  // namespace db

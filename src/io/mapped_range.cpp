#include "io/mapped_range.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace db {

void release_mapped_range(const void* p, size_t n) {
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (p == nullptr || n == 0 || page_size <= 0) return;
  const auto page = static_cast<uintptr_t>(page_size);
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + page - 1) / page * page;  // first page wholly inside
  const uintptr_t last = (begin + n) / page * page;           // end of the last page wholly inside
  if (last <= first) return;
  // madvise, not posix_madvise: glibc implements POSIX_MADV_DONTNEED as a no-op.
  ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace db

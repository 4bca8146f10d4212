// Handing the pages of a read-only file mapping back to the kernel once a
// caller has copied what it needs from them (e.g. weights repacked at load).
#pragma once
#include <cstddef>

namespace db {

// Advises the kernel (madvise MADV_DONTNEED) that the bytes [p, p + n) are not
// needed for now. Only the pages that lie wholly inside the range are released:
// a page the range shares with its neighbours (another tensor still read in
// place) is left alone. A hint only: a failure is ignored.
//
// Contract: [p, p + n) must lie inside a read-only, unmodified file mapping
// (MappedFile: MAP_PRIVATE, PROT_READ). Its released pages are read back from
// the file if touched again, so later reads see the same bytes; they only cost
// a page fault then. Never call it on heap or other anonymous memory: there
// MADV_DONTNEED discards the contents and later reads see zeros.
void release_mapped_range(const void* p, size_t n);

}  // namespace db

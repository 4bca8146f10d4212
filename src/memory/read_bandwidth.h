// The machine's memory read bandwidth, measured once: every thread of a pool sums
// its share of a buffer far larger than the caches; the best of a few passes
// counts. The roofline gauge divides a decode step's bytes by its time against it.
#pragma once
#include <cstddef>

namespace db {

class ThreadPool;

// Bytes per second read by `pool`'s threads from a fresh buffer of `bytes`
// (rounded down to 4 KiB, at least 4 KiB), best of `passes` (>= 1). Takes about
// passes x bytes / bandwidth plus the time to touch the buffer once.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t{256} << 20, int passes = 3);

}  // namespace db

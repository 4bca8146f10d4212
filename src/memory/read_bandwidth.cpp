#include "memory/read_bandwidth.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "util/thread_pool.h"

namespace db {

double measure_read_bandwidth(ThreadPool& pool, size_t bytes, int passes) {
  const size_t words = std::max<size_t>(bytes / 4096, 1) * (4096 / sizeof(uint64_t));
  std::unique_ptr<uint64_t[]> buf(new uint64_t[words]);
  const auto n = static_cast<int64_t>(words);
  pool.parallel_for(n, [&](int64_t b, int64_t e) {  // each thread touches (and so places) its own share
    for (int64_t i = b; i < e; ++i) buf[i] = static_cast<uint64_t>(i);
  });
  std::atomic<uint64_t> sink{0};
  double best = 0;
  for (int p = 0; p < std::max(passes, 1); ++p) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(n, [&](int64_t b, int64_t e) {
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // independent sums keep the loads in flight
      int64_t i = b;
      for (; i + 4 <= e; i += 4) {
        s0 += buf[i];
        s1 += buf[i + 1];
        s2 += buf[i + 2];
        s3 += buf[i + 3];
      }
      for (; i < e; ++i) s0 += buf[i];
      sink.fetch_add(s0 + s1 + s2 + s3, std::memory_order_relaxed);
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(words * sizeof(uint64_t)) / std::max(s, 1e-9));
  }
  return best;  // (the sums went to `sink`, so the reads are not elided)
}

}  // namespace db

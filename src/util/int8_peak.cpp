#include "util/int8_peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "util/cpu_features.h"
#include "util/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace db {

namespace {

constexpr int kChains = 12;   // independent accumulators: enough to cover the instruction's latency
constexpr long kRounds = 4096;  // rounds of kChains instructions per call

#if defined(__x86_64__)
// Each returns the multiply-adds it did; the sum goes to `sink` so nothing is elided.
// Three functions of one shape, not one template: each loop's intrinsics need their
// ISA's target attribute on the function that holds the loop, and a helper with a
// wider target than its caller is not inlined into it (GCC: "target specific option
// mismatch"), so a shared template would measure a call per instruction instead.
__attribute__((target("avx512f,avx512vnni"))) double chains_avx512vnni(std::atomic<int64_t>& sink) {
  __m512i acc[kChains];
  for (__m512i& a : acc) a = _mm512_setzero_si512();
  const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(2);
  for (long r = 0; r < kRounds; ++r)
    for (__m512i& a : acc) a = _mm512_dpbusd_epi32(a, x, y);
  __m512i s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_epi32(s, acc[i]);
  sink.fetch_add(_mm512_reduce_add_epi32(s), std::memory_order_relaxed);
  return 64.0 * kChains * kRounds;
}

__attribute__((target("avx2,avxvnni"))) double chains_avx_vnni(std::atomic<int64_t>& sink) {
  __m256i acc[kChains];
  for (__m256i& a : acc) a = _mm256_setzero_si256();
  const __m256i x = _mm256_set1_epi8(1), y = _mm256_set1_epi8(2);
  for (long r = 0; r < kRounds; ++r)
    for (__m256i& a : acc) a = _mm256_dpbusd_avx_epi32(a, x, y);
  __m256i s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_epi32(s, acc[i]);
  sink.fetch_add(_mm256_extract_epi32(s, 0), std::memory_order_relaxed);
  return 32.0 * kChains * kRounds;
}

__attribute__((target("avx2"))) double chains_avx2(std::atomic<int64_t>& sink) {
  __m256i acc[kChains];
  for (__m256i& a : acc) a = _mm256_setzero_si256();
  const __m256i x = _mm256_set1_epi8(1), y = _mm256_set1_epi8(2), ones = _mm256_set1_epi16(1);
  for (long r = 0; r < kRounds; ++r)
    for (__m256i& a : acc) a = _mm256_add_epi32(a, _mm256_madd_epi16(_mm256_maddubs_epi16(x, y), ones));
  __m256i s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_epi32(s, acc[i]);
  sink.fetch_add(_mm256_extract_epi32(s, 0), std::memory_order_relaxed);
  return 32.0 * kChains * kRounds;
}
#endif

}  // namespace

double measure_int8_peak(ThreadPool& pool, double seconds) {
#if defined(__x86_64__)
  const CpuFeatures& f = cpu_features();
  double (*chains)(std::atomic<int64_t>&) = f.avx512vnni ? chains_avx512vnni
                                            : f.avx_vnni ? chains_avx_vnni
                                            : f.avx2     ? chains_avx2
                                                         : nullptr;
  if (!chains) return 0;
  std::atomic<int64_t> sink{0};
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {
    std::atomic<double> macs{0};
    const auto start = std::chrono::steady_clock::now();
    const auto until = start + std::chrono::duration<double>(seconds / 3);
    pool.run([&](int, int) {
      double mine = 0;
      do {
        mine += chains(sink);
      } while (std::chrono::steady_clock::now() < until);
      double seen = macs.load();
      while (!macs.compare_exchange_weak(seen, seen + mine)) {
      }
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, macs.load() / std::max(s, 1e-9));
  }
  return best;
#else
  (void)pool;
  (void)seconds;
  return 0;
#endif
}

}  // namespace db

// Read bandwidth of this machine, the roofline of a memory-bound decode step:
// each thread of the pool sums its contiguous share of a buffer far larger
// than the last-level cache (and, for comparison, of one that fits in it).
// bytes_per_second is bytes read per second over all threads; a decode step
// that streams W weight bytes per token at T tokens/s uses W * T of it.
//
//   kernels_memory_bench --benchmark_filter='Read/1024MiB'
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "util/thread_pool.h"

namespace {

// Sum of the 64-bit words of [p, p + n): 8 independent chains, so the loads
// rather than the adds set the pace. With PrefetchLines > 0 each 64-byte line
// is also prefetched that many lines ahead, as the matmul kernels do, since
// the hardware prefetcher alone may keep too few lines in flight.
template <int PrefetchLines>
uint64_t sum_words(const uint64_t* p, int64_t n) {
  uint64_t s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    if constexpr (PrefetchLines > 0) __builtin_prefetch(p + i + 8 * PrefetchLines);
    for (int j = 0; j < 8; ++j) s[j] += p[i + j];
  }
  for (; i < n; ++i) s[0] += p[i];
  uint64_t total = 0;
  for (uint64_t v : s) total += v;
  return total;
}

template <int PrefetchLines>
void bench_read(benchmark::State& state, int64_t mib, int threads) {
  const int64_t words = mib * (int64_t{1} << 20) / 8;
  std::vector<uint64_t> buf(static_cast<size_t>(words));
  std::memset(buf.data(), 1, buf.size() * sizeof(uint64_t));  // commit every page before timing
  db::ThreadPool pool(threads);
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  for (auto _ : state) {
    pool.run([&](int tid, int nth) {
      const int64_t begin = words * tid / nth, end = words * (tid + 1) / nth;
      sums[static_cast<size_t>(tid)] = sum_words<PrefetchLines>(buf.data() + begin, end - begin);
    });
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * words * 8);
}

}  // namespace

void register_benchmarks() {
  for (int64_t mib : {1024, 64})
    for (int threads : {1, 2}) {
      const std::string name = "Read/" + std::to_string(mib) + "MiB/th" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), bench_read<0>, mib, threads)->UseRealTime()->MinTime(1.0);
      benchmark::RegisterBenchmark((name + "/prefetch").c_str(), bench_read<8>, mib, threads)->UseRealTime()->MinTime(1.0);
    }
}

// The timing loop shared by the arithmetic-peak benchmarks
// (compute_peak_bench.cpp, compute_peak_avx2_bench.cpp).
#pragma once
#include <benchmark/benchmark.h>

#include "util/thread_pool.h"

// Runs run() on each of `threads` pool threads per iteration and sets the
// counters Gop/s and GMAC/s over all threads, from the instructions and
// multiply-adds one call of run() executes.
template <class Run>
void measure_peak(benchmark::State& state, int threads, const Run& run, double instructions_per_run,
                  double macs_per_run) {
  db::ThreadPool pool(threads);
  double runs = 0;
  for (auto _ : state) {
    pool.run([&](int, int) { run(); });
    runs += threads;
  }
  state.counters["Gop/s"] = benchmark::Counter(runs * instructions_per_run / 1e9, benchmark::Counter::kIsRate);
  state.counters["GMAC/s"] = benchmark::Counter(runs * macs_per_run / 1e9, benchmark::Counter::kIsRate);
}

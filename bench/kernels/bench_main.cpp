// main() of the kernel benchmarks: each executable defines register_benchmarks(),
// then Google Benchmark parses its flags (--benchmark_filter, ...) and runs them.
#include <benchmark/benchmark.h>

void register_benchmarks();

int main(int argc, char** argv) {
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

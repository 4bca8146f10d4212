// The feed-forward gate (matmul_swiglu: silu(gate . x) * (up . x)) at the
// default ISA level, on weights packed as the engine loads them: the
// DeepSeek-R1-Distill-Qwen-1.5B FFN (8960 x 1536 gate and up) per format, token
// count and thread count. GMAC/s counts both products.
//
//   kernels_bench --benchmark_filter='Swiglu/Q6_K/.*/t512'
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_weights.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "util/cpu_features.h"

namespace {

using db::DType;

void bench_swiglu(benchmark::State& state, DType t, int64_t rows, int64_t cols, int64_t n_tokens, int threads) {
  const auto gate_bytes = db::bench::random_weights(t, rows, cols);
  const std::vector<uint8_t> up_bytes = gate_bytes;  // the same values in memory of its own
  db::kernels::PackedWeightStore store;
  const db::IsaLevel isa = db::cpu_features().level;
  const db::TensorView gate = store.prepare(db::bench::weight_view(gate_bytes, t, rows, cols), isa);
  const db::TensorView up = store.prepare(db::bench::weight_view(up_bytes, t, rows, cols), isa);
  const auto n = static_cast<size_t>(n_tokens * rows);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols), 0.5f), out(n), scratch(n);
  db::ThreadPool pool(threads);
  for (auto _ : state) {
    db::kernels::matmul_swiglu(gate, up, x.data(), n_tokens, out.data(), scratch.data(), pool);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GMAC/s"] = benchmark::Counter(2.0 * static_cast<double>(rows * cols * n_tokens) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_swiglu_benchmarks() {
  constexpr int64_t kRows = 8960, kCols = 1536;
  for (DType t : {DType::Q4_0, DType::Q4_K, DType::Q6_K})
    for (int64_t n_tokens : {1, 64, 512})
      for (int threads : {1, 2}) {
        const std::string name = "Swiglu/" + db::dtype_name(t) + "/" + std::to_string(kRows) + "x" +
                                 std::to_string(kCols) + "/t" + std::to_string(n_tokens) + "/th" +
                                 std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), bench_swiglu, t, kRows, kCols, n_tokens, threads)
            ->UseRealTime()
            ->MinTime(0.2);
      }
}

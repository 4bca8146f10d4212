// The absorbed MLA products of the DeepSeek-V2-Lite shape through
// matmul_heads: 16 heads' W_UK^T (512 x 128, Q8_0 as the loader builds it) on
// q_nope, read where it lies in the q rows (192 floats a head), and W_UV
// (128 x 512, Q4_0 like attn_kv_b) on the attention's latent rows (512 a head),
// both repacked as the engine loads them. GMAC/s counts the heads' products.
//
//   kernels_bench --benchmark_filter='^Heads/'
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bench_weights.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"

namespace {

using db::DType;

constexpr int kHeads = 16;

// in_stride: floats between heads' inputs in a token row (the head's width
// plus what follows it, e.g. q_pe after q_nope).
void bench_heads(benchmark::State& state, DType t, int64_t rows, int64_t cols, int64_t in_stride, int64_t n_tokens,
                 int threads) {
  db::kernels::PackedWeightStore store;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<db::TensorView> w;
  for (int h = 0; h < kHeads; ++h) bytes.push_back(db::bench::random_weights(t, rows, cols));
  for (int h = 0; h < kHeads; ++h) w.push_back(store.prepare(db::bench::weight_view(bytes[h], t, rows, cols)));
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n_tokens * kHeads * in_stride));
  std::vector<float> y(static_cast<size_t>(n_tokens * kHeads * rows));
  for (float& v : x) v = normal(rng);
  std::vector<db::kernels::MatmulTask> tasks;
  for (int h = 0; h < kHeads; ++h) tasks.push_back({&w[h], y.data() + h * rows, kHeads * rows});
  db::ThreadPool pool(threads);
  for (auto _ : state) {
    db::kernels::matmul_heads(tasks.data(), kHeads, x.data(), kHeads * in_stride, in_stride, n_tokens, pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(kHeads * rows * cols * n_tokens) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_heads_benchmarks() {
  for (int64_t n_tokens : {256, 512, 1024})
    for (int threads : {1, 2}) {
      const std::string suffix = "/t" + std::to_string(n_tokens) + "/th" + std::to_string(threads);
      benchmark::RegisterBenchmark(("Heads/uk_t/Q8_0/512x128" + suffix).c_str(), bench_heads, DType::Q8_0, 512, 128,
                                   192, n_tokens, threads)
          ->UseRealTime()
          ->MinTime(0.3);
      benchmark::RegisterBenchmark(("Heads/uv/Q4_0/128x512" + suffix).c_str(), bench_heads, DType::Q4_0, 128, 512,
                                   512, n_tokens, threads)
          ->UseRealTime()
          ->MinTime(0.3);
    }
}

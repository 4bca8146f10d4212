// Weight-streaming throughput of the CPU matmul per dtype, shape, token count,
// thread count and ISA level. bytes_per_second counts weight bytes only, so for
// n_tokens = 1 it is the achieved memory bandwidth of the product. Names
// ending in /panels run on weights repacked as the engine loads them
// (kernels/packed_weights.h) at the levels that repack.
//
//   kernels_bench --benchmark_filter='Q4_1/49152x576/t1'
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_weights.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/packed_weights.h"

namespace {

using db::DType;
using db::IsaLevel;

void bench_matmul(benchmark::State& state, DType t, int64_t rows, int64_t cols, int64_t n_tokens, int threads,
                  IsaLevel isa, bool packed) {
  if (!db::isa_supported(isa)) {
    state.SkipWithError("ISA level not supported by this CPU");
    return;
  }
  const auto bytes = db::bench::random_weights(t, rows, cols);
  db::TensorView w = db::bench::weight_view(bytes, t, rows, cols);
  db::kernels::PackedWeightStore store;
  if (packed) w = store.prepare(w, isa);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols), 0.5f), y(static_cast<size_t>(n_tokens * rows));
  db::ThreadPool pool(threads);
  for (auto _ : state) {
    db::kernels::matmul_isa(isa, w, x.data(), n_tokens, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes.size()));
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(rows * cols * n_tokens) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  const DType types[] = {DType::Q4_1, DType::Q8_0, DType::Q4_0, DType::Q5_0, DType::Q5_1, DType::Q4_K,
                         DType::Q5_K, DType::Q6_K, DType::F16,  DType::F32};
  // SmolLM2-135M (576 wide), DeepSeek-R1-Distill-Qwen-1.5B (1536 wide, FFN 8960), a large square-ish
  // shape, and a DeepSeek-V2-Lite routed expert (gate/up 1408x2048, down 2048x1408), which a batched
  // decode step runs with a few tokens each (3: 32 sequences x top-6 over 64 experts).
  const std::pair<int64_t, int64_t> shapes[] = {{576, 576},   {1536, 576},  {576, 1536},  {49152, 576},
                                                {1536, 1536}, {8960, 1536}, {1536, 8960}, {32768, 2048},
                                                {1408, 2048}, {2048, 1408}};
  for (DType t : types)
    for (auto [rows, cols] : shapes) {
      if (cols % db::block_size(t) != 0) continue;
      for (int64_t n_tokens : {1, 3, 8, 64, 512})
        for (int threads : {1, 2})
          for (int level = 0; level < db::kIsaLevelCount; ++level)
            for (bool packed : {false, true}) {
              const auto isa = static_cast<IsaLevel>(level);
              if (packed && !db::kernels::prefers_packed(t, isa)) continue;
              const std::string name = db::dtype_name(t) + "/" + std::to_string(rows) + "x" + std::to_string(cols) +
                                       "/t" + std::to_string(n_tokens) + "/th" + std::to_string(threads) + "/" +
                                       db::isa_name(isa) + (packed ? "/panels" : "");
              benchmark::RegisterBenchmark(name.c_str(), bench_matmul, t, rows, cols, n_tokens, threads, isa, packed)
                  ->UseRealTime()
                  ->MinTime(0.2);
            }
    }
}

}  // namespace

void register_panel_tile_benchmarks();  // panel_tile_bench.cpp
void register_swiglu_benchmarks();      // swiglu_bench.cpp
void register_pack_benchmarks();        // pack_bench.cpp
void register_heads_benchmarks();       // heads_bench.cpp

void register_benchmarks() {
  register_all();
  register_panel_tile_benchmarks();
  register_swiglu_benchmarks();
  register_pack_benchmarks();
  register_heads_benchmarks();
}

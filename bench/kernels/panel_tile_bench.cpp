// The quantized panel kernels of this CPU's level alone: one tile of 16 rows x 16 tokens over
// `cols` elements, called over and over with its weights and activations in
// the caches. Its GMAC/s is the ceiling of the whole product (kernels_bench),
// which adds the activation quantization and streams weights and activations
// from further out; compare both with kernels_compute_peak_bench.
//
//   kernels_bench --benchmark_filter='PanelTile/Q4_K'
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "bench_weights.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/quantize_acts.h"
#include "kernels/packed_weights.h"

namespace {

using db::DType;
using db::IsaLevel;

void bench_panel_tile(benchmark::State& state, DType t, int64_t cols) {
  namespace k = db::kernels;
  const IsaLevel level = db::cpu_features().level;
  if (!k::prefers_packed(t, level)) {
    state.SkipWithError("no quantized panel kernel for this format at this CPU's level");
    return;
  }
  const k::GemmKernels& kernels = k::gemm_kernels(level);
  const k::PanelKernels& panel = k::weight_kernels(kernels, t)->panel;
  // One call of the kernel's largest shape: one group over its most tokens.
  const int kTokens = panel.max_tokens > 0 ? panel.max_tokens : k::kPanelTileTokens;
  const auto bytes = db::bench::random_weights(t, db::kPanelRows, cols);
  k::PackedWeightStore store;
  const db::TensorView w = store.prepare(db::bench::weight_view(bytes, t, db::kPanelRows, cols), level);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(kTokens * cols)), y(static_cast<size_t>(kTokens * db::kPanelRows));
  for (float& v : x) v = uniform(rng);
  db::ThreadPool pool(1);
  const k::QuantizedActs acts = k::quantize_acts(kernels, static_cast<int>(db::panel_block_elems(t)),
                                                 k::ActLayout::Tiles, x.data(), kTokens, cols, pool);
  k::GemmTile tile{};
  tile.w = static_cast<const uint8_t*>(w.data);
  tile.cols = cols;
  tile.acts = &acts;
  tile.y = y.data();
  tile.ldy = db::kPanelRows;
  tile.nr = db::kPanelRows;
  tile.nt = kTokens;
  const k::GemmTileFn fn = panel.gemm;
  for (auto _ : state) {
    fn(tile);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(db::kPanelRows * kTokens * cols) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens"] = kTokens;
}

}  // namespace

void register_panel_tile_benchmarks() {
  for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K})
    for (int64_t cols : {768, 1408, 1536, 2048}) {
      const std::string name = "PanelTile/" + db::dtype_name(t) + "/c" + std::to_string(cols);
      benchmark::RegisterBenchmark(name.c_str(), bench_panel_tile, t, cols)->UseRealTime()->MinTime(0.3);
    }
}

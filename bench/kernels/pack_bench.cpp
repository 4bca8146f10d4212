// Load-time repacking of GGUF rows into the Panels16 layout (pack_panels), one
// thread, into memory already touched, so that the figure is the packer's own
// and not the page faults of a fresh buffer. Bytes are the GGUF bytes read.
// The shape is the DeepSeek-R1-Distill-Qwen-1.5B feed-forward's gate.
//
//   kernels_bench --benchmark_filter='Pack/'
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench_weights.h"
#include "kernels/cpu/panels.h"

namespace {

using db::DType;

void bench_pack(benchmark::State& state, DType t, int64_t rows, int64_t cols) {
  const auto src = db::bench::random_weights(t, rows, cols);
  std::vector<uint8_t> dst(static_cast<size_t>(db::panel_matrix_bytes(t, rows, cols)));
  const auto stride = static_cast<int64_t>(db::row_bytes(t, cols));
  for (auto _ : state) {
    db::kernels::pack_panels(t, src.data(), stride, rows, cols, dst.data());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(src.size()));
}

}  // namespace

void register_pack_benchmarks() {
  constexpr int64_t kRows = 8960, kCols = 1536;
  for (DType t : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    const std::string name = "Pack/" + db::dtype_name(t) + "/" + std::to_string(kRows) + "x" + std::to_string(kCols);
    benchmark::RegisterBenchmark(name.c_str(), bench_pack, t, kRows, kCols)->UseRealTime()->MinTime(0.2);
  }
}

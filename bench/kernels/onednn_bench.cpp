// deepbatch's CPU matmul beside oneDNN's on the same shapes, token counts and
// thread counts, in one run (GMAC/s counters):
//
//   onednn/s8/...    u8 activations x s8 weights -> f32, one scale per output
//                    row (vpdpbusd, the instruction our quantized kernels use)
//   onednn/bf16/...  bf16 activations x bf16 weights -> f32 (vdpbf16ps)
//   onednn/f32/...   f32 x f32
//   deepbatch/<dtype>/...  matmul() at this CPU's level, weights laid out as
//                    the engine loads them (Q8_0, Q4_0, BF16, F32)
//
// What each side does per call differs, in oneDNN's favour: its s8 and bf16
// products take activations already converted (ours quantize or read f32
// activations inside the call), and its s8 weights have one scale per row
// where a GGUF block format has one per 32 or 256 weights (so oneDNN cannot
// compute a Q8_0 / Q4_0 / K-quant product exactly; its s8 figure bounds what
// an int8 product with no per-block scales reaches). Weights are reordered
// into oneDNN's preferred layout once, outside the timed loop, as ours are
// repacked at load.
//
// oneDNN runs on OpenMP threads; run with OMP_WAIT_POLICY=passive so that
// they do not spin while deepbatch's own pool runs:
//   OMP_WAIT_POLICY=passive onednn_bench --benchmark_filter='/8960x1536/t512/'
#include <benchmark/benchmark.h>
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_weights.h"
#include "kernels/matmul.h"
#include "kernels/packed_weights.h"
#include "tensor/tensor.h"
#include "util/cpu_features.h"
#include "util/fp16.h"

namespace {

using db::DType;

void set_gmacs(benchmark::State& state, int64_t rows, int64_t cols, int64_t n_tokens) {
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(rows * cols * n_tokens) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

// Small integers as u8 / s8; normal floats as bf16 / f32 (random bytes would
// make denormals, which are slow).
void fill(dnnl::memory& m, dt type, std::mt19937& rng) {
  const size_t n = m.get_desc().get_size() / dnnl::memory::data_type_size(type);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  if (type == dt::f32) {
    auto* p = static_cast<float*>(m.get_data_handle());
    for (size_t i = 0; i < n; ++i) p[i] = normal(rng);
  } else if (type == dt::bf16) {
    auto* p = static_cast<uint16_t*>(m.get_data_handle());
    for (size_t i = 0; i < n; ++i) p[i] = db::f32_to_bf16(normal(rng));
  } else {
    auto* p = static_cast<uint8_t*>(m.get_data_handle());
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(rng() % 64);
  }
}

// oneDNN's matmul of n_tokens x cols activations by cols x rows weights (of
// type `type`; activations u8 for s8 weights), the weights reordered from
// `plain` into the layout the primitive prefers.
struct OneDnnMatmul {
  dnnl::memory src, weights, dst;
  dnnl::matmul mm;

  OneDnnMatmul(const dnnl::engine& eng, dnnl::stream& strm, dt type, int64_t rows, int64_t cols, int64_t n_tokens,
               dnnl::memory& plain) {
    const dt src_type = type == dt::s8 ? dt::u8 : type;
    const dnnl::memory::desc src_md({n_tokens, cols}, src_type, tag::ab);
    const dnnl::memory::desc wei_any({cols, rows}, type, tag::any);
    const dnnl::memory::desc dst_md({n_tokens, rows}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    if (type == dt::s8) attr.set_output_scales(1 << 1, std::vector<float>(static_cast<size_t>(rows), 0.01f));
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any, dst_md), attr, eng);
    src = dnnl::memory(src_md, eng);
    dst = dnnl::memory(dst_md, eng);
    weights = dnnl::memory(pd.weights_desc(), eng);
    dnnl::reorder(plain, weights).execute(strm, plain, weights);
    mm = dnnl::matmul(pd);
  }
  void run(dnnl::stream& strm) {
    mm.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
};

// Counters: GMAC/s, and row0_as_alone = 1 when token 0's outputs are bit for
// bit those of the same product run on token 0 alone (0: oneDNN's result
// depends on the batch, which the engine's exactness rules out).
void bench_onednn(benchmark::State& state, dt type, int64_t rows, int64_t cols, int64_t n_tokens, int threads) {
  omp_set_num_threads(threads);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::mt19937 rng(42);
  dnnl::memory plain(dnnl::memory::desc({cols, rows}, type, tag::ab), eng);
  fill(plain, type, rng);
  OneDnnMatmul batch(eng, strm, type, rows, cols, n_tokens, plain);
  fill(batch.src, batch.src.get_desc().data_type(), rng);
  for (auto _ : state) batch.run(strm);
  set_gmacs(state, rows, cols, n_tokens);

  OneDnnMatmul alone(eng, strm, type, rows, cols, 1, plain);
  std::memcpy(alone.src.get_data_handle(), batch.src.get_data_handle(), alone.src.get_desc().get_size());
  alone.run(strm);
  batch.run(strm);
  state.counters["row0_as_alone"] =
      std::memcmp(alone.dst.get_data_handle(), batch.dst.get_data_handle(), alone.dst.get_desc().get_size()) == 0;
}

void bench_deepbatch(benchmark::State& state, DType t, int64_t rows, int64_t cols, int64_t n_tokens, int threads) {
  const auto bytes = db::bench::random_weights(t, rows, cols);
  db::TensorView w = db::bench::weight_view(bytes, t, rows, cols);
  db::kernels::PackedWeightStore store;
  const db::IsaLevel level = db::cpu_features().level;
  if (db::kernels::prefers_packed(t, level)) w = store.prepare(w, level);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols), 0.5f), y(static_cast<size_t>(n_tokens * rows));
  db::ThreadPool pool(threads);
  for (auto _ : state) {
    db::kernels::matmul(w, x.data(), n_tokens, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  set_gmacs(state, rows, cols, n_tokens);
}

void register_all() {
  // SmolLM2-135M (576 wide) and DeepSeek-R1-Distill-Qwen-1.5B (1536 wide, FFN 8960), as rows x cols.
  const std::pair<int64_t, int64_t> shapes[] = {{576, 576}, {1536, 576}, {1536, 1536}, {8960, 1536}, {1536, 8960}};
  const std::pair<const char*, dt> onednn_types[] = {{"s8", dt::s8}, {"bf16", dt::bf16}, {"f32", dt::f32}};
  const DType ours[] = {DType::Q8_0, DType::Q4_0, DType::BF16, DType::F32};
  for (auto [rows, cols] : shapes)
    for (int64_t n_tokens : {1, 64, 512})
      for (int threads : {1, 2}) {
        std::string shape = "/";
        shape += std::to_string(rows) + "x" + std::to_string(cols);
        shape += "/t" + std::to_string(n_tokens) + "/th" + std::to_string(threads);
        for (auto [name, type] : onednn_types)
          benchmark::RegisterBenchmark(("onednn/" + std::string(name) + shape).c_str(), bench_onednn, type, rows, cols,
                                       n_tokens, threads)
              ->UseRealTime()
              ->MinTime(0.2);
        for (DType t : ours)
          benchmark::RegisterBenchmark(("deepbatch/" + db::dtype_name(t) + shape).c_str(), bench_deepbatch, t, rows,
                                       cols, n_tokens, threads)
              ->UseRealTime()
              ->MinTime(0.2);
      }
}

}  // namespace

void register_benchmarks() { register_all(); }

// The per-token elementwise kernels of a decoder step, per ISA level where they
// have several: activation quantization (Q8x32 for 32-element block weights,
// Q8x256 for K-quants), SwiGLU, RMSNorm and RoPE. Sizes are one step of 64
// tokens of a 576-wide model (1536-wide feed-forward, 9 heads of 64).
//
//   kernels_elementwise_bench --benchmark_filter=swiglu
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/activations.h"
#include "kernels/cpu/matmul_dispatch.h"
#include "kernels/cpu/rms_norm.h"
#include "kernels/cpu/rope.h"

namespace {

using db::IsaLevel;

constexpr int64_t kTokens = 64, kHidden = 576, kFfn = 1536, kHeads = 9, kHeadDim = 64;

std::vector<float> gaussian(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = normal(rng);
  return v;
}

bool skip_unsupported(benchmark::State& state, IsaLevel isa) {
  if (db::isa_supported(isa)) return false;
  state.SkipWithError("ISA level not supported by this CPU");
  return true;
}

void bench_quantize(benchmark::State& state, IsaLevel isa, int block) {
  if (skip_unsupported(state, isa)) return;
  const auto& k = db::kernels::gemm_kernels(isa);
  const int64_t cols = block == 32 ? kHidden : 1536;  // Q8x256 needs a multiple of 256
  const auto x = gaussian(kTokens * cols, 1);
  std::vector<int8_t> qs(x.size());
  std::vector<float> d(static_cast<size_t>(cols / 32)), ds(d.size());
  std::vector<int32_t> zsum(d.size());
  std::vector<int16_t> bsums(static_cast<size_t>(cols / 16));
  for (auto _ : state) {
    for (int64_t t = 0; t < kTokens; ++t) {
      if (block == 32)
        k.quantize_q8x32(x.data() + t * cols, cols, qs.data() + t * cols, d.data(), ds.data(), zsum.data());
      else
        k.quantize_q8x256(x.data() + t * cols, cols, qs.data() + t * cols, d.data(), bsums.data());
    }
    benchmark::DoNotOptimize(qs.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens * cols);
}

void bench_swiglu(benchmark::State& state, IsaLevel isa) {
  if (skip_unsupported(state, isa)) return;
  const auto g = gaussian(kTokens * kFfn, 2), u = gaussian(kTokens * kFfn, 3);
  std::vector<float> out(g.size());
  for (auto _ : state) {
    db::kernels::swiglu_isa(isa, g.data(), u.data(), kTokens * kFfn, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens * kFfn);
}

void bench_rms_norm(benchmark::State& state, IsaLevel isa) {
  if (skip_unsupported(state, isa)) return;
  const auto x = gaussian(kTokens * kHidden, 4), w = gaussian(kHidden, 5);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    db::kernels::rms_norm_rows_isa(isa, x.data(), w.data(), kTokens, kHidden, 1e-5f, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens * kHidden);
}

void bench_rope(benchmark::State& state) {
  auto q = gaussian(kTokens * kHeads * kHeadDim, 6);
  std::vector<float> inv_freq(kHeadDim / 2), cos_v(kHeadDim / 2), sin_v(kHeadDim / 2);
  for (int i = 0; i < kHeadDim / 2; ++i) inv_freq[static_cast<size_t>(i)] = 1.0f / (1.0f + static_cast<float>(i));
  for (auto _ : state) {
    for (int64_t t = 0; t < kTokens; ++t) {
      db::kernels::rope_angles(static_cast<int32_t>(t), inv_freq.data(), kHeadDim / 2, 1.0f, cos_v.data(),
                               sin_v.data());
      db::kernels::rope_rotate(q.data() + t * kHeads * kHeadDim, kHeads, kHeadDim, kHeadDim / 2,
                               db::kernels::RopeStyle::NEOX, cos_v.data(), sin_v.data());
    }
    benchmark::DoNotOptimize(q.data());
  }
  state.SetItemsProcessed(state.iterations() * kTokens * kHeads * kHeadDim);
}

void register_all() {
  for (int level = 0; level < db::kIsaLevelCount; ++level) {
    const auto isa = static_cast<IsaLevel>(level);
    const std::string name = db::isa_name(isa);
    benchmark::RegisterBenchmark(("quantize_q8x32/" + name).c_str(), bench_quantize, isa, 32)->MinTime(0.2);
    benchmark::RegisterBenchmark(("quantize_q8x256/" + name).c_str(), bench_quantize, isa, 256)->MinTime(0.2);
    benchmark::RegisterBenchmark(("swiglu/" + name).c_str(), bench_swiglu, isa)->MinTime(0.2);
    benchmark::RegisterBenchmark(("rms_norm/" + name).c_str(), bench_rms_norm, isa)->MinTime(0.2);
  }
  benchmark::RegisterBenchmark("rope_neox", bench_rope)->MinTime(0.2);
}

}  // namespace

void register_benchmarks() { register_all(); }

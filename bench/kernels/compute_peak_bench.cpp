// Arithmetic peak of this machine, the roofline of compute-bound steps
// (prompts, large batches): each thread of the pool runs 12 independent chains
// of one AVX-512 instruction (enough to cover its latency), so the execution
// ports set the pace. Counters, over all threads:
//   Gop/s    instructions per second;
//   GMAC/s   multiply-adds per second (64 per vpdpbusd, 16 per vfmadd231ps).
// "dpbusd+fold" is the quantized panel kernels' mix for one 32-element
// sub-block and token (8 vpdpbusd, then a convert and an FMA in float): its
// GMAC/s is the ceiling of those kernels' formula when they share one pair of ports.
//
// The AVX2 mixes are in compute_peak_avx2_bench.cpp.
//
//   kernels_compute_peak_bench --benchmark_filter='th2'
#include <benchmark/benchmark.h>

#include <string>

#include "peak_counters.h"
#include "util/cpu_features.h"

namespace {

#if defined(__x86_64__)

constexpr long kRounds = 1 << 16;

#define DB_DP(r) "vpdpbusd %%zmm30, %%zmm31, %%zmm" #r "\n"
#define DB_FMA(r) "vfmadd231ps %%zmm30, %%zmm31, %%zmm" #r "\n"
#define DB_FOLD(r, t, f) "vcvtdq2ps %%zmm" #r ", %%zmm" #t "\nvfmadd231ps %%zmm29, %%zmm" #t ", %%zmm" #f "\n"
#define DB_CLOBBER                                                                                                  \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", \
      "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23"

enum class Mix { Dpbusd, Fma, DpbusdFold };

// Instructions of one run_mix(mix).
double instructions_per_run(Mix mix) { return mix == Mix::DpbusdFold ? kRounds * 30.0 : kRounds * 12.0; }

// kRounds rounds of 12 instructions (DpbusdFold: rounds of 24 vpdpbusd and 3
// folds, so 8:1:1 per sub-block). The registers start at zero, so no float
// operation meets a denormal.
__attribute__((target("avx512f,avx512vnni"))) void run_mix(Mix mix) {
  asm volatile("vpxord %%zmm0, %%zmm0, %%zmm0\n"
               "vmovdqa64 %%zmm0, %%zmm1\nvmovdqa64 %%zmm0, %%zmm2\nvmovdqa64 %%zmm0, %%zmm3\n"
               "vmovdqa64 %%zmm0, %%zmm4\nvmovdqa64 %%zmm0, %%zmm5\nvmovdqa64 %%zmm0, %%zmm6\n"
               "vmovdqa64 %%zmm0, %%zmm7\nvmovdqa64 %%zmm0, %%zmm8\nvmovdqa64 %%zmm0, %%zmm9\n"
               "vmovdqa64 %%zmm0, %%zmm10\nvmovdqa64 %%zmm0, %%zmm11\nvmovdqa64 %%zmm0, %%zmm20\n"
               "vmovdqa64 %%zmm0, %%zmm21\nvmovdqa64 %%zmm0, %%zmm22\nvmovdqa64 %%zmm0, %%zmm29\n"
               "vmovdqa64 %%zmm0, %%zmm30\nvmovdqa64 %%zmm0, %%zmm31\n" ::
                   : DB_CLOBBER, "xmm29", "xmm30", "xmm31");
  for (long i = 0; i < kRounds; ++i) {
    switch (mix) {
      case Mix::Dpbusd:
        asm volatile(DB_DP(0) DB_DP(1) DB_DP(2) DB_DP(3) DB_DP(4) DB_DP(5) DB_DP(6) DB_DP(7) DB_DP(8) DB_DP(9)
                         DB_DP(10) DB_DP(11)::
                             : DB_CLOBBER);
        break;
      case Mix::Fma:
        asm volatile(DB_FMA(0) DB_FMA(1) DB_FMA(2) DB_FMA(3) DB_FMA(4) DB_FMA(5) DB_FMA(6) DB_FMA(7) DB_FMA(8)
                         DB_FMA(9) DB_FMA(10) DB_FMA(11)::
                             : DB_CLOBBER);
        break;
      case Mix::DpbusdFold:
        asm volatile(DB_DP(0) DB_DP(1) DB_DP(2) DB_DP(3) DB_DP(4) DB_DP(5) DB_DP(6) DB_DP(7) DB_DP(8) DB_DP(9)
                         DB_DP(10) DB_DP(11) DB_FOLD(0, 12, 20) DB_DP(0) DB_DP(1) DB_DP(2) DB_DP(3) DB_DP(4)
                             DB_DP(5) DB_FOLD(4, 13, 21) DB_DP(6) DB_DP(7) DB_DP(8) DB_DP(9) DB_DP(10) DB_DP(11)
                                 DB_FOLD(8, 14, 22)::
                                     : DB_CLOBBER);
        break;
    }
  }
}

void bench_peak(benchmark::State& state, Mix mix, int threads) {
  if (!db::cpu_features().avx512vnni) {
    state.SkipWithError("this CPU has no AVX-512 VNNI");
    return;
  }
  const double n = instructions_per_run(mix);
  // DpbusdFold: 24 of its 30 instructions are vpdpbusd.
  const double macs = mix == Mix::Fma ? 16 * n : mix == Mix::Dpbusd ? 64 * n : 64 * n * 24 / 30;
  measure_peak(state, threads, [mix] { run_mix(mix); }, n, macs);
}

#endif

}  // namespace

void register_avx2_peak_benchmarks();  // compute_peak_avx2_bench.cpp

void register_benchmarks() {
  register_avx2_peak_benchmarks();
#if defined(__x86_64__)
  const std::pair<const char*, Mix> mixes[] = {
      {"dpbusd", Mix::Dpbusd}, {"fma_ps", Mix::Fma}, {"dpbusd+fold", Mix::DpbusdFold}};
  for (const auto& [name, mix] : mixes)
    for (int threads : {1, 2}) {
      const std::string full = std::string("Peak/") + name + "/th" + std::to_string(threads);
      benchmark::RegisterBenchmark(full.c_str(), bench_peak, mix, threads)->UseRealTime()->MinTime(0.5);
    }
#endif
}

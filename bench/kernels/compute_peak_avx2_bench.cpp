// The AVX2 side of compute_peak_bench.cpp: which of the AVX2 panel kernels'
// instructions share execution ports. Each thread of the pool runs rounds of
// independent instructions (FMAs accumulate into 8 or more registers, every
// other instruction only writes its destination), so only the ports set the
// pace. Counters, over all threads:
//   Gop/s    instructions per second;
//   GMAC/s   multiply-adds per second (32 per vpmaddubsw, 8 per vfmadd231ps).
// A mix of two instructions, 8 of each, that runs at the Gop/s of one alone
// shares its ports; at twice that, it does not. "panel_q4" is the AVX2 Q4_1 panel
// kernel's instruction counts for one block, token and 16 rows (16
// vpmaddubsw, 14 vpaddw, 2 vpmaddwd, 2 converts, 2 multiplies, 4 FMAs) with
// no dependencies and no memory: its GMAC/s is the ceiling of that kernel's
// instruction mix on this core.
//
//   kernels_compute_peak_bench --benchmark_filter='avx2.*th1'
#include <benchmark/benchmark.h>

#include <string>

#include "peak_counters.h"
#include "util/cpu_features.h"

namespace {

#if defined(__x86_64__)

constexpr long kRounds = 1 << 16;

#define DB_MUB(r) "vpmaddubsw %%ymm14, %%ymm15, %%ymm" #r "\n"
#define DB_FMA(r) "vfmadd231ps %%ymm14, %%ymm15, %%ymm" #r "\n"
#define DB_ADDW(r) "vpaddw %%ymm14, %%ymm15, %%ymm" #r "\n"
#define DB_MWD(r) "vpmaddwd %%ymm14, %%ymm15, %%ymm" #r "\n"
#define DB_CVT(r) "vcvtdq2ps %%ymm15, %%ymm" #r "\n"
#define DB_MUL(r) "vmulps %%ymm14, %%ymm15, %%ymm" #r "\n"
#define DB_SIX(OP) OP(0) OP(1) OP(2) OP(3) OP(4) OP(5)
#define DB_SIX_HI(OP) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)
// 8 of OP1 (destinations 0-3, twice) between 8 of OP2 (destinations 4-11).
#define DB_PAIRS(OP1, OP2) \
  OP1(0) OP2(4) OP1(1) OP2(5) OP1(2) OP2(6) OP1(3) OP2(7) OP1(0) OP2(8) OP1(1) OP2(9) OP1(2) OP2(10) OP1(3) OP2(11)
#define DB_CLOBBER \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15"

enum class Mix { Maddubs, Fma, MaddubsFma, MaddubsAddw, MaddubsMaddwd, PanelQ4 };

struct MixInfo {
  const char* name;
  Mix mix;
  double instructions;  // per round
  double macs;          // per round
};

constexpr MixInfo kMixes[] = {
    {"maddubs", Mix::Maddubs, 12, 12 * 32},
    {"fma_ps", Mix::Fma, 12, 12 * 8},
    {"maddubs+fma_ps", Mix::MaddubsFma, 16, 8 * 32 + 8 * 8},
    {"maddubs+paddw", Mix::MaddubsAddw, 16, 8 * 32},
    {"maddubs+maddwd", Mix::MaddubsMaddwd, 16, 8 * 32},
    {"panel_q4", Mix::PanelQ4, 40, 16 * 32},
};

// kRounds rounds of the mix. The registers start at zero, so no float
// operation meets a denormal.
__attribute__((target("avx2,fma"))) void run_mix(Mix mix) {
  asm volatile("vpxor %%ymm14, %%ymm14, %%ymm14\nvpxor %%ymm15, %%ymm15, %%ymm15\n"
               "vpxor %%ymm0, %%ymm0, %%ymm0\nvpxor %%ymm1, %%ymm1, %%ymm1\nvpxor %%ymm2, %%ymm2, %%ymm2\n"
               "vpxor %%ymm3, %%ymm3, %%ymm3\nvpxor %%ymm4, %%ymm4, %%ymm4\nvpxor %%ymm5, %%ymm5, %%ymm5\n"
               "vpxor %%ymm6, %%ymm6, %%ymm6\nvpxor %%ymm7, %%ymm7, %%ymm7\nvpxor %%ymm8, %%ymm8, %%ymm8\n"
               "vpxor %%ymm9, %%ymm9, %%ymm9\nvpxor %%ymm10, %%ymm10, %%ymm10\nvpxor %%ymm11, %%ymm11, %%ymm11\n" ::
                   : DB_CLOBBER);
  for (long i = 0; i < kRounds; ++i) {
    switch (mix) {
      case Mix::Maddubs: asm volatile(DB_SIX(DB_MUB) DB_SIX_HI(DB_MUB)::: DB_CLOBBER); break;
      case Mix::Fma: asm volatile(DB_SIX(DB_FMA) DB_SIX_HI(DB_FMA)::: DB_CLOBBER); break;
      case Mix::MaddubsFma: asm volatile(DB_PAIRS(DB_MUB, DB_FMA)::: DB_CLOBBER); break;
      case Mix::MaddubsAddw: asm volatile(DB_PAIRS(DB_MUB, DB_ADDW)::: DB_CLOBBER); break;
      case Mix::MaddubsMaddwd: asm volatile(DB_PAIRS(DB_MUB, DB_MWD)::: DB_CLOBBER); break;
      case Mix::PanelQ4:
        asm volatile(DB_SIX(DB_MUB) DB_SIX_HI(DB_MUB) DB_MUB(0) DB_MUB(1) DB_MUB(2) DB_MUB(3)  // 16 vpmaddubsw
                     DB_SIX(DB_ADDW) DB_SIX_HI(DB_ADDW) DB_ADDW(0) DB_ADDW(1)                // 14 vpaddw
                     DB_MWD(2) DB_MWD(3) DB_CVT(4) DB_CVT(5) DB_MUL(6) DB_MUL(7)             // 2 + 2 + 2
                     DB_FMA(8) DB_FMA(9) DB_FMA(10) DB_FMA(11)::                             // 4 FMAs
                         : DB_CLOBBER);
        break;
    }
  }
}

void bench_peak(benchmark::State& state, MixInfo info, int threads) {
  if (!db::cpu_features().avx2) {
    state.SkipWithError("this CPU has no AVX2");
    return;
  }
  measure_peak(state, threads, [mix = info.mix] { run_mix(mix); }, kRounds * info.instructions, kRounds * info.macs);
}

#endif

}  // namespace

void register_avx2_peak_benchmarks() {
#if defined(__x86_64__)
  for (const MixInfo& info : kMixes)
    for (int threads : {1, 2}) {
      const std::string full = std::string("Peak/avx2/") + info.name + "/th" + std::to_string(threads);
      benchmark::RegisterBenchmark(full.c_str(), bench_peak, info, threads)->UseRealTime()->MinTime(0.5);
    }
#endif
}

// The four-chunk steps of the 16-token AMX pipeline of the 32-element block
// kernels (panel_amx.cpp), written as inline assembly.
//
// Why this schedule: for a few hundred cycles after any tile instruction this
// core runs 512-bit FMA-unit work (multiplies, FMAs, conversions) at one
// instruction per cycle instead of two. The float steps of a chunk (a
// conversion, a multiply and an FMA per token) then cost about as much as its
// tile work, so the two must overlap: a step issues the tile products of
// chunks 4g..4g+3 interleaved with the float steps of chunks 4g-4..4g-1, whose
// C tiles the previous step stored. Why assembly: written with intrinsics, GCC
// keeps the 16 accumulators in memory across the tile instructions (each FMA
// then also stores). Measured alone on cache-resident operands a step runs
// about 70 cycles per chunk; the batched scheme of panel_amx.h about 93.
//
// The float steps are the VNNI kernels' own, in their order (per token j:
// with mins, sum_j = fma(m, ds_j, sum_j); then sum_j = fma(float(dot_j),
// d * ad_j, sum_j)), so the results stay bit-identical to them.
#pragma once
#if defined(__x86_64__)

#include <memory>

#include "kernels/cpu/x86/panel_amx.h"

namespace db::kernels::amx {
namespace {

// The operands of one step. Chunk i (0..3) of a step:
//   activations  acts + 512 i (16 token rows, 32 bytes apart)
//   staged B     b + 512 i;       its C tile goes to c + 256 i
// and of the step before, whose float steps run now:
//   C tile       fold_c + 256 i   header h + HeaderBytes i
//   scales       d + 16 i (token j at + j), with mins the sums ds + 16 i
struct StepOperands {
  const int8_t* acts;
  const uint8_t* b;
  int32_t* c;
  const int32_t* fold_c;
  const uint8_t* h;
  const float* d;
  const float* ds;
};

// Chunk i's tile product: A tile tA, B tile tB, C tile i (see panel_tile_config);
// its C tile is stored separately (DB_STEP_STORE_C), after the float steps
// that follow it, by when the product is done.
#define DB_STEP_PRODUCT(DP, i, tA, tB)                        \
  "tileloadd " #i "*512(%[acts],%[s32],1), %%tmm" #tA "\n\t" \
  "tileloadd " #i "*512(%[b],%[s64],1), %%tmm" #tB "\n\t"    \
  "tilezero %%tmm" #i "\n\t" DP " %%tmm" #tB ", %%tmm" #tA ", %%tmm" #i "\n\t"
#define DB_STEP_STORE_C(i) "tilestored %%tmm" #i ", " #i "*1024(%[c],%[s64],1)\n\t"
#define DB_STEP_TILE(DP, i, tA, tB) DB_STEP_PRODUCT(DP, i, tA, tB) DB_STEP_STORE_C(i)

// Token j of chunk i into its accumulator zmm j: zmm28 holds the chunk's row
// scales d, zmm29 its mins m.
#define DB_STEP_DOT(i, j)                                            \
  "vmulps " #i "*64+" #j "*4(%[d])%{1to16%}, %%zmm28, %%zmm30\n\t" \
  "vcvtdq2ps " #i "*1024+" #j "*64(%[fc]), %%zmm31\n\t"             \
  "vfmadd231ps %%zmm30, %%zmm31, %%zmm" #j "\n\t"
#define DB_STEP_MIN_DOT(i, j) \
  "vfmadd231ps " #i "*64+" #j "*4(%[ds])%{1to16%}, %%zmm29, %%zmm" #j "\n\t" DB_STEP_DOT(i, j)

#define DB_STEP_TOKENS(ROW, i)                                                                              \
  ROW(i, 0) ROW(i, 1) ROW(i, 2) ROW(i, 3) ROW(i, 4) ROW(i, 5) ROW(i, 6) ROW(i, 7) ROW(i, 8) ROW(i, 9) ROW(i, 10) \
  ROW(i, 11) ROW(i, 12) ROW(i, 13) ROW(i, 14) ROW(i, 15)

// Chunk i's float steps (header bytes HB: 32, or 64 with mins at + 32).
#define DB_STEP_FOLD(i, HB) "vcvtph2ps " #i "*" #HB "(%[h]), %%zmm28\n\t" DB_STEP_TOKENS(DB_STEP_DOT, i)
#define DB_STEP_FOLD_MIN(i, HB)                                                                     \
  "vcvtph2ps " #i "*" #HB "(%[h]), %%zmm28\n\t"                                                   \
  "vcvtph2ps " #i "*" #HB "+32(%[h]), %%zmm29\n\t" DB_STEP_TOKENS(DB_STEP_MIN_DOT, i)

#define DB_STEP_BOTH(DP, FOLD, HB)                                                                   \
  DB_STEP_PRODUCT(DP, 0, 4, 6) FOLD(0, HB) DB_STEP_STORE_C(0) DB_STEP_PRODUCT(DP, 1, 5, 7) FOLD(1, HB)  \
  DB_STEP_STORE_C(1) DB_STEP_PRODUCT(DP, 2, 4, 6) FOLD(2, HB) DB_STEP_STORE_C(2)                       \
  DB_STEP_PRODUCT(DP, 3, 5, 7) FOLD(3, HB) DB_STEP_STORE_C(3)
#define DB_STEP_TILES(DP) DB_STEP_TILE(DP, 0, 4, 6) DB_STEP_TILE(DP, 1, 5, 7) DB_STEP_TILE(DP, 2, 4, 6) DB_STEP_TILE(DP, 3, 5, 7)
#define DB_STEP_FOLDS(FOLD, HB) FOLD(0, HB) FOLD(1, HB) FOLD(2, HB) FOLD(3, HB)

// The accumulators: token j's 16 rows in zmm j during a step, in acc[j] between steps.
#define DB_STEP_ACC(OP, j) OP " " #j "*64(%[acc]), %%zmm" #j "\n\t"
#define DB_STEP_ACC16(OP)                                                                                        \
  DB_STEP_ACC(OP, 0) DB_STEP_ACC(OP, 1) DB_STEP_ACC(OP, 2) DB_STEP_ACC(OP, 3) DB_STEP_ACC(OP, 4) DB_STEP_ACC(OP, 5) \
  DB_STEP_ACC(OP, 6) DB_STEP_ACC(OP, 7) DB_STEP_ACC(OP, 8) DB_STEP_ACC(OP, 9) DB_STEP_ACC(OP, 10)                 \
  DB_STEP_ACC(OP, 11) DB_STEP_ACC(OP, 12) DB_STEP_ACC(OP, 13) DB_STEP_ACC(OP, 14) DB_STEP_ACC(OP, 15)
#define DB_STEP_STORE(j) "vmovaps %%zmm" #j ", " #j "*64(%[acc])\n\t"
#define DB_STEP_STORE16                                                                                          \
  DB_STEP_STORE(0) DB_STEP_STORE(1) DB_STEP_STORE(2) DB_STEP_STORE(3) DB_STEP_STORE(4) DB_STEP_STORE(5)          \
  DB_STEP_STORE(6) DB_STEP_STORE(7) DB_STEP_STORE(8) DB_STEP_STORE(9) DB_STEP_STORE(10) DB_STEP_STORE(11)       \
  DB_STEP_STORE(12) DB_STEP_STORE(13) DB_STEP_STORE(14) DB_STEP_STORE(15)

#define DB_STEP_ASM(TEXT)                                                                                          \
  asm volatile(TEXT                                                                                                \
               :                                                                                                   \
               : [acts] "r"(o.acts), [b] "r"(o.b), [c] "r"(o.c), [fc] "r"(o.fold_c), [h] "r"(o.h), [d] "r"(o.d),   \
                 [ds] "r"(o.ds), [acc] "r"(acc), [s32] "r"(int64_t{32}), [s64] "r"(int64_t{64})                    \
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", \
                 "xmm12", "xmm13", "xmm14", "xmm15", "xmm28", "xmm29", "xmm30", "xmm31", "memory")
#define DB_STEP_FOLDING(TEXT) DB_STEP_ASM(DB_STEP_ACC16("vmovaps") TEXT DB_STEP_STORE16)

// The C tiles of the steps in flight: step g's in c[g % 2].
struct alignas(64) StepBuffers {
  int32_t c[2][4][256];
};

// A 64-byte aligned buffer of at least `bytes` bytes, one per (calling thread,
// index < 2), kept for the thread's lifetime and grown as needed: the staged
// B tiles of a call (512 bytes per block).
inline uint8_t* staging_buffer(int index, int64_t bytes) {
  struct Buffer {
    std::unique_ptr<uint8_t[]> owner;
    uint8_t* data = nullptr;
    int64_t size = 0;
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[index];
  if (b.size < bytes) {
    b.owner = std::make_unique<uint8_t[]>(static_cast<size_t>(bytes) + 63);
    b.data = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(b.owner.get()) + 63) & ~uintptr_t{63});
    b.size = bytes;
  }
  return b.data;
}

enum class StepPart { kTiles, kBoth, kFolds };

// One step of a format with or without mins (with mins: unsigned codes,
// TDPBSUD, 64 header bytes; without: signed codes, TDPBSSD, 32); acc: the 16
// accumulators (64-byte aligned).
template <bool HasMin, StepPart Part>
DB_PANEL_INLINE void run_step(const StepOperands& o, __m512* acc) {
  if constexpr (!HasMin) {
    if constexpr (Part == StepPart::kTiles) DB_STEP_ASM(DB_STEP_TILES("tdpbssd"));
    if constexpr (Part == StepPart::kBoth) DB_STEP_FOLDING(DB_STEP_BOTH("tdpbssd", DB_STEP_FOLD, 32));
    if constexpr (Part == StepPart::kFolds) DB_STEP_FOLDING(DB_STEP_FOLDS(DB_STEP_FOLD, 32));
  } else {
    if constexpr (Part == StepPart::kTiles) DB_STEP_ASM(DB_STEP_TILES("tdpbsud"));
    if constexpr (Part == StepPart::kBoth) DB_STEP_FOLDING(DB_STEP_BOTH("tdpbsud", DB_STEP_FOLD_MIN, 64));
    if constexpr (Part == StepPart::kFolds) DB_STEP_FOLDING(DB_STEP_FOLDS(DB_STEP_FOLD_MIN, 64));
  }
}

#undef DB_STEP_FOLDING
#undef DB_STEP_ASM
#undef DB_STEP_STORE16
#undef DB_STEP_STORE
#undef DB_STEP_ACC16
#undef DB_STEP_ACC
#undef DB_STEP_FOLDS
#undef DB_STEP_TILES
#undef DB_STEP_BOTH
#undef DB_STEP_FOLD_MIN
#undef DB_STEP_FOLD
#undef DB_STEP_TOKENS
#undef DB_STEP_MIN_DOT
#undef DB_STEP_DOT
#undef DB_STEP_TILE
#undef DB_STEP_STORE_C
#undef DB_STEP_PRODUCT

}  // namespace
}  // namespace db::kernels::amx
#endif

// AVX-512 (F/BW/VL) helpers shared by the AVX-512 kernel files.
// Included only by files compiled with AVX-512 flags; internal linkage only.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/x86/avx2_util.h"

namespace db::kernels {

static inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }

// [v, v]: one 32-byte load in both halves.
static inline __m512i broadcast256(const void* p) { return _mm512_broadcast_i64x4(load256(p)); }

// Shifts each 64-bit quarter of the low half right by lo bits and of the high half by hi bits.
static inline __m512i srl_halves(__m512i v, int lo, int hi) {
  return _mm512_srlv_epi64(v, _mm512_setr_epi64(lo, lo, lo, lo, hi, hi, hi, hi));
}

// Index vector selecting int32 lane `first + lane / group` for each lane.
static inline __m512i group_index(int first, int group) {
  alignas(64) int32_t idx[16];
  for (int i = 0; i < 16; ++i) idx[i] = first + i / group;
  return _mm512_load_si512(idx);
}

}  // namespace db::kernels

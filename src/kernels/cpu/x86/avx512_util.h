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

// v[j] (j < 16) -> one register whose lane j combines v[j]'s 16 lanes with op
// (a binary operation on __m512), in a fixed tree: within each 128-bit lane
// lanes (0 op 2) op (1 op 3), then the four 128-bit lanes (L0 op L1) op (L2 op L3).
// For max or integer add (bit casts) any tree gives the same result.
template <class Op>
static inline __m512 transpose_reduce16(const __m512 (&v)[16], Op op) {
  __m512 t[8];
  for (int i = 0; i < 8; ++i)  // 128-bit lane: [a0 op a2, b0 op b2, a1 op a3, b1 op b3] of v[2i], v[2i+1]
    t[i] = op(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  __m512 u[4];
  for (int i = 0; i < 4; ++i) {  // 128-bit lane: partial results of v[4i] .. v[4i+3]
    const __m512d a = _mm512_castps_pd(t[2 * i]), b = _mm512_castps_pd(t[2 * i + 1]);
    u[i] = op(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  // Combine the four 128-bit lanes of u[i] into 128-bit lane i: (L0 op L1) op (L2 op L3).
  const __m512 w01 = op(_mm512_shuffle_f32x4(u[0], u[1], 0x88), _mm512_shuffle_f32x4(u[0], u[1], 0xDD));
  const __m512 w23 = op(_mm512_shuffle_f32x4(u[2], u[3], 0x88), _mm512_shuffle_f32x4(u[2], u[3], 0xDD));
  return op(_mm512_shuffle_f32x4(w01, w23, 0x88), _mm512_shuffle_f32x4(w01, w23, 0xDD));
}

}  // namespace db::kernels

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
// The tree runs in three stages, which a kernel may also apply as its vectors
// become ready: reduce_pair() of v[2i], v[2i+1]; reduce_quad() of two pairs
// (v[4i] .. v[4i+3]); reduce_lanes() of the four quads.

// Per 128-bit lane: [a0 op a2, b0 op b2, a1 op a3, b1 op b3].
template <class Op>
static inline __m512 reduce_pair(__m512 a, __m512 b, Op op) {
  return op(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
}

// Per 128-bit lane: the partial results of the four vectors behind pairs t0, t1.
template <class Op>
static inline __m512 reduce_quad(__m512 t0, __m512 t1, Op op) {
  const __m512d a = _mm512_castps_pd(t0), b = _mm512_castps_pd(t1);
  return op(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
}

// Lane 4i + e = the result of vector 4i + e, from the four quads u[i]:
// their 128-bit lanes combined as (L0 op L1) op (L2 op L3).
template <class Op>
static inline __m512 reduce_lanes(__m512 u0, __m512 u1, __m512 u2, __m512 u3, Op op) {
  const __m512 w01 = op(_mm512_shuffle_f32x4(u0, u1, 0x88), _mm512_shuffle_f32x4(u0, u1, 0xDD));
  const __m512 w23 = op(_mm512_shuffle_f32x4(u2, u3, 0x88), _mm512_shuffle_f32x4(u2, u3, 0xDD));
  return op(_mm512_shuffle_f32x4(w01, w23, 0x88), _mm512_shuffle_f32x4(w01, w23, 0xDD));
}

template <class Op>
static inline __m512 transpose_reduce16(const __m512 (&v)[16], Op op) {
  __m512 u[4];
  for (int i = 0; i < 4; ++i)
    u[i] = reduce_quad(reduce_pair(v[4 * i], v[4 * i + 1], op), reduce_pair(v[4 * i + 2], v[4 * i + 3], op), op);
  return reduce_lanes(u[0], u[1], u[2], u[3], op);
}

}  // namespace db::kernels

// Shared parts of the AVX-512 VNNI K-quant Panels16 kernels
// (panel_k_avx512vnni.cpp) and the AMX ones (panel_k_amx.cpp): a chunk's code
// registers and the per-super-block float steps. Included only by files built
// for AVX-512 VNNI; everything here has internal linkage.
#pragma once
#if defined(__x86_64__)

#include "kernels/cpu/panel_k_layout.h"
#include "kernels/cpu/x86/panel_avx512vnni.h"

namespace db::kernels::avx512vnni {
namespace {

// The codes of chunk c (elements 32c..32c+31) of a super-block: w[i] holds
// elements 4i..4i+3 of every row.
template <DType T>
DB_PANEL_INLINE void load_chunk(const uint8_t* codes, int c, __m512i (&w)[8]) {
  load_nibbles(codes + 256 * c, w);
  if constexpr (T == DType::Q5_K) {
    merge_fifth_bits(codes + kKLowBytes + 64 * c, w);
  } else if constexpr (T == DType::Q6_K) {
    const __m512i bits45 = _mm512_set1_epi8(0x30);
    for (int half = 0; half < 2; ++half) {
      const __m512i h = load512(codes + kKLowBytes + 64 * (2 * c + half));
      __m512i* v = w + 4 * half;
      v[0] = and_or(move_bits<0, 4>(h), bits45, v[0]);
      v[1] = and_or(move_bits<2, 4>(h), bits45, v[1]);
      v[2] = and_or(h, bits45, v[2]);
      v[3] = and_or(move_bits<6, 4>(h), bits45, v[3]);
    }
  }
}

// The activation codes of chunk c of the tile's first token (token j's at + j * 256),
// from that token's activation slot in the super-block.
DB_PANEL_INLINE const int8_t* chunk_acts(const QuantizedActs& a, int64_t slot, int c) {
  return a.qs + slot * 256 + 32 * c;
}

// Zeroes acc, then calls body(slot, codes, header) for each super-block of the
// group, its bytes prefetched ahead (see prefetch_ahead()); slot + j is token t0 + j's activation
// slot in that super-block.
template <class F, int NT, class Body>
void for_each_super_block(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT], const Body& body) {
  const int64_t nb = t.cols / 256, slot0 = act_slot(*t.acts, t.t0, 0);
  for (int j = 0; j < NT; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* codes = group + b * F::kCodeBytes;
    prefetch_ahead(group + b * F::kBlockBytes, F::kBlockBytes);
    body(slot0 + b * kActTileTokens, codes, group + nb * F::kCodeBytes + b * F::kHeaderBytes);
  }
}

// d * float(sc) for the 16 lanes' sub-block scales sc (int32).
DB_PANEL_INLINE __m512 scaled_d(__m512 d, __m512i sc) { return _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)); }

// acc[j] = fma(f[j], da, acc[j]) with token j's super-block scale da.
template <int NT>
DB_PANEL_INLINE void add_super_block(const QuantizedActs& a, int64_t slot, const __m512 (&f)[NT], __m512 (&acc)[NT]) {
  for (int j = 0; j < NT; ++j) acc[j] = _mm512_fmadd_ps(f[j], _mm512_set1_ps(a.d[slot + j]), acc[j]);
}

// Q4_K / Q5_K: f[j] = float(sum_s mn[s] bsum32(s)) * -dmin for token j of
// the super-block at `codes` / `header` (token j's activation slot slot + j).
template <class F, int NT>
DB_PANEL_INLINE void min_terms(const QuantizedActs& a, int64_t slot, const uint8_t* codes, const uint8_t* header,
                               __m512 (&f)[NT]) {
  // Per lane the mins of sub-blocks 2p and 2p + 1 as two int16: one
  // vpdpwssd multiplies them by the token's two 32-element sums.
  __m512i mins[4];
  for (int p = 0; p < 4; ++p) {
    const uint8_t* m = codes + F::kScales + 128 + 32 * p;
    mins[p] = _mm512_or_si512(_mm512_cvtepu8_epi32(load128(m)),
                              _mm512_slli_epi32(_mm512_cvtepu8_epi32(load128(m + 16)), 16));
  }
  const __m512 neg_dmin = _mm512_sub_ps(_mm512_setzero_ps(), load_halves(header + 32));
  for (int j = 0; j < NT; ++j) {
    const int16_t* bsum32 = a.bsum32 + (slot + j) * 8;
    __m512i m = _mm512_setzero_si512();
    for (int p = 0; p < 4; ++p) m = _mm512_dpwssd_epi32(m, mins[p], broadcast4(bsum32 + 2 * p));
    f[j] = _mm512_mul_ps(_mm512_cvtepi32_ps(m), neg_dmin);
  }
}

}  // namespace
}  // namespace db::kernels::avx512vnni
#endif

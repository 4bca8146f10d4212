// AVX-512 VNNI Panels16 kernels for K-quant super-blocks (formula:
// kernels/cpu/panels.h; layout: kernels/cpu/panel_k_layout.h). As for the
// 32-element formats, the 16 lanes are the 16 rows of a group: a 32-element
// chunk's codes are 8 registers (the high bits merged into the nibbles with
// one ternary-logic op each), its dot products per token 8 vpdpbusd, the
// sub-block scales an integer multiply, and the activation-sum terms (mins,
// the Q6_K zero point of 32) a vpdpwssd against the token's 16-element sums.
// A tile reads each super-block once for up to kPanelTileTokens tokens.
#if defined(__x86_64__)
#include "kernels/cpu/panel_k_layout.h"
#include "kernels/cpu/x86/panel_avx512vnni.h"

namespace db::kernels::avx512vnni {

namespace {

// (a & b) | c per bit.
__m512i and_or(__m512i a, __m512i b, __m512i c) { return _mm512_ternarylogic_epi32(a, b, c, 0xEA); }

// Moves bit `from` of every byte of v to bit `to` (other bits: garbage to mask).
template <int From, int To>
__m512i move_bits(__m512i v) {
  if constexpr (From < To) return _mm512_slli_epi16(v, To - From);
  if constexpr (From > To) return _mm512_srli_epi16(v, From - To);
  return v;
}

template <DType T>
struct KFormat {
  static constexpr int64_t kHighBytes = T == DType::Q6_K ? 1024 : T == DType::Q5_K ? 512 : 0;
  static constexpr int64_t kScales = kKLowBytes + kHighBytes;  // offset of the scale region
  static constexpr int64_t kCodeBytes = kScales + kKScaleBytes;
  static constexpr int64_t kHeaderBytes = T == DType::Q6_K ? 32 : 64;
};

// The codes of chunk c (elements 32c..32c+31) of a super-block: w[i] holds
// elements 4i..4i+3 of every row.
template <DType T>
DB_PANEL_INLINE void load_chunk(const uint8_t* codes, int c, __m512i (&w)[8]) {
  load_nibbles(codes + 256 * c, w);
  if constexpr (T == DType::Q5_K) {
    const __m512i h = load512(codes + kKLowBytes + 64 * c), bit4 = _mm512_set1_epi8(0x10);
    w[0] = and_or(move_bits<0, 4>(h), bit4, w[0]);
    w[1] = and_or(move_bits<1, 4>(h), bit4, w[1]);
    w[2] = and_or(move_bits<2, 4>(h), bit4, w[2]);
    w[3] = and_or(move_bits<3, 4>(h), bit4, w[3]);
    w[4] = and_or(h, bit4, w[4]);
    w[5] = and_or(move_bits<5, 4>(h), bit4, w[5]);
    w[6] = and_or(move_bits<6, 4>(h), bit4, w[6]);
    w[7] = and_or(move_bits<7, 4>(h), bit4, w[7]);
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

// The tile's activation codes of chunk c, per token, from the activation
// slot of the tile's first token in the super-block.
template <int NT>
DB_PANEL_INLINE void chunk_acts(const QuantizedActs& a, int64_t slot, int c, const int8_t* (&q)[NT]) {
  for (int j = 0; j < NT; ++j) q[j] = a.qs + (slot + j) * 256 + 32 * c;
}

// s[j] = the dot products of token j with code registers w[I0, I1) of a chunk.
template <int I0, int I1, int NT>
DB_PANEL_INLINE void chunk_dots(const __m512i (&w)[8], const int8_t* const (&q)[NT], __m512i (&s)[NT]) {
  for (int j = 0; j < NT; ++j) s[j] = _mm512_setzero_si512();
  add_dots<I0, I1>(w, q, s);
}

// Zeroes acc, then calls body(slot, codes, header) for each super-block of the
// group, its codes prefetched ahead; slot + j is token t0 + j's activation
// slot in that super-block.
template <class F, int NT, class Body>
void for_each_super_block(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT], const Body& body) {
  const int64_t nb = t.cols / 256, slot0 = act_slot(*t.acts, t.t0, 0);
  for (int j = 0; j < NT; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* codes = group + b * F::kCodeBytes;
    prefetch_ahead(codes, F::kCodeBytes);
    body(slot0 + b * kActTileTokens, codes, group + nb * F::kCodeBytes + b * F::kHeaderBytes);
  }
}

// Q4_K / Q5_K: S = sum_s sc[s] dot(s), M = sum_s mn[s] bsum32(s).
template <DType T>
struct KMinProducts {
  using F = KFormat<T>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    const QuantizedActs& a = *t.acts;
    for_each_super_block<F>(t, group, acc, [&](int64_t slot, const uint8_t* codes, const uint8_t* header) {
      __m512i scaled[NT];
      for (int j = 0; j < NT; ++j) scaled[j] = _mm512_setzero_si512();
      for (int c = 0; c < 8; ++c) {
        __m512i w[8], s[NT];
        const int8_t* q[NT];
        load_chunk<T>(codes, c, w);
        chunk_acts(a, slot, c, q);
        chunk_dots<0, 8>(w, q, s);
        const __m512i sc = _mm512_cvtepu8_epi32(load128(codes + F::kScales + 16 * c));
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) scaled[j] = _mm512_add_epi32(scaled[j], _mm512_mullo_epi32(s[j], sc));
      }
      // Each lane's min twice, as two int16: one vpdpwssd multiplies it by a sub-block's two bsums.
      __m512i mins[8];
      for (int s = 0; s < 8; ++s) {
        const __m512i m = _mm512_cvtepu8_epi32(load128(codes + F::kScales + 128 + 16 * s));
        mins[s] = _mm512_or_si512(m, _mm512_slli_epi32(m, 16));
      }
      const __m512 d = load_halves(header), dmin = load_halves(header + 32);
      for (int j = 0; j < NT; ++j) {
        const int16_t* bsums = a.bsums + (slot + j) * 16;
        __m512i m = _mm512_setzero_si512();
        for (int s = 0; s < 8; ++s) m = _mm512_dpwssd_epi32(m, mins[s], broadcast4(bsums + 2 * s));
        const __m512 da = _mm512_set1_ps(a.d[slot + j]);
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(scaled[j]), _mm512_mul_ps(d, da), acc[j]);
        acc[j] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(dmin, da), acc[j]);
      }
    });
  }
};

// Q6_K: I = sum_g sc[g] (dot(g) - 32 bsum16(g)).
struct Q6KProducts {
  using F = KFormat<DType::Q6_K>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    const QuantizedActs& a = *t.acts;
    for_each_super_block<F>(t, group, acc, [&](int64_t slot, const uint8_t* codes, const uint8_t* header) {
      __m512i sum[NT];
      for (int j = 0; j < NT; ++j) sum[j] = _mm512_setzero_si512();
      for (int c = 0; c < 8; ++c) {
        __m512i w[8], s[NT];
        const int8_t* q[NT];
        load_chunk<DType::Q6_K>(codes, c, w);
        chunk_acts(a, slot, c, q);
        // Per lane the scales of sub-blocks 2c and 2c + 1 as two int16.
        const __m512i pair = _mm512_cvtepi8_epi16(load256(codes + F::kScales + 32 * c));
        const __m512i sc_lo = _mm512_srai_epi32(_mm512_slli_epi32(pair, 16), 16), sc_hi = _mm512_srai_epi32(pair, 16);
        const __m512i zero_point = _mm512_mullo_epi16(pair, _mm512_set1_epi16(-32));
        chunk_dots<0, 4>(w, q, s);
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) sum[j] = _mm512_add_epi32(sum[j], _mm512_mullo_epi32(s[j], sc_lo));
        chunk_dots<4, 8>(w, q, s);
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j)
          sum[j] = _mm512_dpwssd_epi32(_mm512_add_epi32(sum[j], _mm512_mullo_epi32(s[j], sc_hi)), zero_point,
                                       broadcast4(a.bsums + (slot + j) * 16 + 2 * c));
      }
      const __m512 d = load_halves(header);
      for (int j = 0; j < NT; ++j)
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[j]),
                                 _mm512_mul_ps(d, _mm512_set1_ps(a.d[slot + j])), acc[j]);
    });
  }
};

}  // namespace

void panel_q4_k(const GemmTile& t) { panel_gemm<KMinProducts<DType::Q4_K>>(t); }
void panel_q5_k(const GemmTile& t) { panel_gemm<KMinProducts<DType::Q5_K>>(t); }
void panel_q6_k(const GemmTile& t) { panel_gemm<Q6KProducts>(t); }
void panel_swiglu_q4_k(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<KMinProducts<DType::Q4_K>>(t, up); }
void panel_swiglu_q5_k(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<KMinProducts<DType::Q5_K>>(t, up); }
void panel_swiglu_q6_k(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Q6KProducts>(t, up); }

}  // namespace db::kernels::avx512vnni
#endif

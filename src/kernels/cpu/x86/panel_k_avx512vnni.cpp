// AVX-512 VNNI Panels16 kernels for K-quant super-blocks (formula:
// kernels/cpu/panels.h; layout: kernels/cpu/panel_k_layout.h). As for the
// 32-element formats, the 16 lanes are the 16 rows of a group: a 32-element
// chunk's codes are 8 registers (the high bits merged into the nibbles with
// one ternary-logic op each), its dot products per token 8 vpdpbusd, each
// sub-block's scale a convert and an FMA in float, the Q4_K / Q5_K mins 4
// vpdpwssd per super-block against the token's 32-element sums, and the Q6_K
// zero point the starting value of each sub-block's dot products.
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

// The activation codes of chunk c of the tile's first token (token j's at + j * 256),
// from that token's activation slot in the super-block.
DB_PANEL_INLINE const int8_t* chunk_acts(const QuantizedActs& a, int64_t slot, int c) {
  return a.qs + slot * 256 + 32 * c;
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

// d * float(sc) for the 16 lanes' sub-block scales sc (int32).
DB_PANEL_INLINE __m512 scaled_d(__m512 d, __m512i sc) { return _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc)); }

// f[j] = fma(float(s[j]), dsc, f[j]) for every token.
template <int NT>
DB_PANEL_INLINE void fold_sub_block(const __m512i (&s)[NT], __m512 dsc, __m512 (&f)[NT]) {
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[j]), dsc, f[j]);
}

// acc[j] = fma(f[j], da, acc[j]) with token j's super-block scale da.
template <int NT>
DB_PANEL_INLINE void add_super_block(const QuantizedActs& a, int64_t slot, const __m512 (&f)[NT], __m512 (&acc)[NT]) {
  for (int j = 0; j < NT; ++j) acc[j] = _mm512_fmadd_ps(f[j], _mm512_set1_ps(a.d[slot + j]), acc[j]);
}

// Q4_K / Q5_K: f = float(sum_s mn[s] bsum32(s)) * -dmin, then per chunk s
// f = fma(float(dot(s)), d * sc[s], f).
template <DType T>
struct KMinProducts {
  using F = KFormat<T>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    const QuantizedActs& a = *t.acts;
    for_each_super_block<F>(t, group, acc, [&](int64_t slot, const uint8_t* codes, const uint8_t* header) {
      // Per lane the mins of sub-blocks 2p and 2p + 1 as two int16: one
      // vpdpwssd multiplies them by the token's two 32-element sums.
      __m512i mins[4];
      for (int p = 0; p < 4; ++p) {
        const uint8_t* m = codes + F::kScales + 128 + 32 * p;
        mins[p] = _mm512_or_si512(_mm512_cvtepu8_epi32(load128(m)),
                                  _mm512_slli_epi32(_mm512_cvtepu8_epi32(load128(m + 16)), 16));
      }
      const __m512 d = load_halves(header), neg_dmin = _mm512_sub_ps(_mm512_setzero_ps(), load_halves(header + 32));
      __m512 f[NT];
      for (int j = 0; j < NT; ++j) {
        const int16_t* bsum32 = a.bsum32 + (slot + j) * 8;
        __m512i m = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) m = _mm512_dpwssd_epi32(m, mins[p], broadcast4(bsum32 + 2 * p));
        f[j] = _mm512_mul_ps(_mm512_cvtepi32_ps(m), neg_dmin);
      }
      for (int c = 0; c < 8; ++c) {
        __m512i w[8], s[NT];
        load_chunk<T>(codes, c, w);
        for (int j = 0; j < NT; ++j) s[j] = _mm512_setzero_si512();
        add_dots<0, 8, 256, NT, true>(w, chunk_acts(a, slot, c), s);
        fold_sub_block(s, scaled_d(d, _mm512_cvtepu8_epi32(load128(codes + F::kScales + 16 * c))), f);
      }
      add_super_block(a, slot, f, acc);
    });
  }
};

// Q6_K: f = 0, then per 16-element sub-block g
// f = fma(float(dot(g) + zsum16(g)), d * sc[g], f), each dot product started
// from the token's zero-point term (a broadcast load).
struct Q6KProducts {
  using F = KFormat<DType::Q6_K>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    const QuantizedActs& a = *t.acts;
    for_each_super_block<F>(t, group, acc, [&](int64_t slot, const uint8_t* codes, const uint8_t* header) {
      const __m512 d = load_halves(header);
      __m512 f[NT];
      for (int j = 0; j < NT; ++j) f[j] = _mm512_setzero_ps();
      for (int c = 0; c < 8; ++c) {
        __m512i w[8], s[NT];
        load_chunk<DType::Q6_K>(codes, c, w);
        const int8_t* q = chunk_acts(a, slot, c);
        // Per lane the scales of sub-blocks 2c and 2c + 1 as two int16.
        const __m512i pair = _mm512_cvtepi8_epi16(load256(codes + F::kScales + 32 * c));
        for (int half = 0; half < 2; ++half) {
          const int32_t* zsum16 = a.zsum16 + slot * 16 + 2 * c + half;  // token j's at + 16 j
#pragma GCC unroll 16
          for (int j = 0; j < NT; ++j) s[j] = broadcast4(zsum16 + 16 * j);
          if (half == 0) {
            add_dots<0, 4, 256, NT, true>(w, q, s);
            fold_sub_block(s, scaled_d(d, _mm512_srai_epi32(_mm512_slli_epi32(pair, 16), 16)), f);
          } else {
            add_dots<4, 8, 256, NT, true>(w, q, s);
            fold_sub_block(s, scaled_d(d, _mm512_srai_epi32(pair, 16)), f);
          }
        }
      }
      add_super_block(a, slot, f, acc);
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

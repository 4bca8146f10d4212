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
#include "kernels/cpu/x86/panel_k_avx512vnni.h"

namespace db::kernels::avx512vnni {

namespace {

// Q4_K / Q5_K: f = float(sum_s mn[s] bsum32(s)) * -dmin, then per chunk s
// f = fma(float(dot(s)), d * sc[s], f).
template <DType T>
struct KMinProducts {
  using F = KFormat<T>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    const QuantizedActs& a = *t.acts;
    for_each_super_block<F>(t, group, acc, [&](int64_t slot, const uint8_t* codes, const uint8_t* header) {
      const __m512 d = load_halves(header);
      __m512 f[NT];
      min_terms<F>(a, slot, codes, header, f);
      for (int c = 0; c < 8; ++c) {
        __m512i w[8];
        load_chunk<T>(codes, c, w);
        const int8_t* q = chunk_acts(a, slot, c);
        const __m512 dsc = scaled_d(d, _mm512_cvtepu8_epi32(load128(codes + F::kScales + 16 * c)));
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) {
          const __m512i dots = token_dots<0, 8, true>(w, q + 256 * j, _mm512_setzero_si512());
          f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dots), dsc, f[j]);
        }
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
        __m512i w[8];
        load_chunk<DType::Q6_K>(codes, c, w);
        const int8_t* q = chunk_acts(a, slot, c);
        // Per lane the scales of sub-blocks 2c and 2c + 1 as two int16.
        const __m512i pair = _mm512_cvtepi8_epi16(load256(codes + F::kScales + 32 * c));
        const __m512 dsc_low = scaled_d(d, _mm512_srai_epi32(_mm512_slli_epi32(pair, 16), 16));
        const __m512 dsc_high = scaled_d(d, _mm512_srai_epi32(pair, 16));
        const int32_t* zsum16 = a.zsum16 + slot * 16 + 2 * c;  // token j's two at + 16 j
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) {
          const int8_t* qj = q + 256 * j;
          const __m512i low = token_dots<0, 4, true>(w, qj, broadcast4(zsum16 + 16 * j));
          f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(low), dsc_low, f[j]);
          const __m512i high = token_dots<4, 8, true>(w, qj, broadcast4(zsum16 + 16 * j + 1));
          f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(high), dsc_high, f[j]);
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

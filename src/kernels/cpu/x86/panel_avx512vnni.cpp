// AVX-512 VNNI Panels16 kernels (layout and formula: kernels/cpu/panels.h).
// The 16 int32 / float lanes of a register are the 16 rows of a group, so a
// block's integer dot products for one token are 8 vpdpbusd (4 codes per lane
// each, the token's 4 activation bytes broadcast), and no horizontal sums exist.
// A tile reads each weight block once for up to kPanelTileTokens tokens.
#if defined(__x86_64__)
#include "kernels/cpu/x86/panel_avx512vnni.h"
#include "kernels/quant_blocks.h"

namespace db::kernels::avx512vnni {

namespace {

// A token's -zp * sum(q) for one block in every lane, from its zsum = -8 * sum(q)
// (broadcast straight from memory: no integer work per token for zp 8).
template <int ZeroPoint>
DB_PANEL_INLINE __m512i zero_point_term(const int32_t* zsum) {
  static_assert(ZeroPoint == 0 || ZeroPoint == 8 || ZeroPoint == 16 || ZeroPoint == 128);
  if constexpr (ZeroPoint == 0) return _mm512_setzero_si512();
  const __m512i z = _mm512_set1_epi32(*zsum);
  if constexpr (ZeroPoint == 8) return z;
  return _mm512_slli_epi32(z, ZeroPoint == 16 ? 1 : 4);
}

// The products of a group in 32-element block format W (see run() in panel_avx512vnni.h).
template <class W>
struct Block32Products {
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]);
};

template <class W>
template <int NT>
void Block32Products<W>::products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
  const QuantizedActs& a = *t.acts;
  const int64_t nb = t.cols / kQK;
  const uint8_t* headers = group + nb * W::kCodeBytes;
  __m512 sum[NT];
  for (int j = 0; j < NT; ++j) sum[j] = _mm512_setzero_ps();
  const int64_t slot0 = act_slot(a, t.t0, 0);  // token t0 + j's block b: slot0 + b * kActTileTokens + j
  for (int64_t b = 0; b < nb; ++b) {
    prefetch_ahead(group + b * W::kBlockBytes, W::kBlockBytes);
    W w;
    w.load(group + b * W::kCodeBytes, headers + b * W::kHeaderBytes);
    const int64_t slot = slot0 + b * kActTileTokens;
    const int8_t* q = a.qs + slot * kQK;
#pragma GCC unroll 16
    for (int j = 0; j < NT; ++j) {
      const __m512i init = zero_point_term<W::kZeroPoint>(a.zsum + slot + j);
      const __m512 dot = _mm512_cvtepi32_ps(token_dots<0, 8, false>(w.c, q + j * kQK, init));
      if (W::kHasMin) sum[j] = _mm512_fmadd_ps(w.m, _mm512_set1_ps(a.ds[slot + j]), sum[j]);
      sum[j] = _mm512_fmadd_ps(dot, _mm512_mul_ps(w.d, _mm512_set1_ps(a.d[slot + j])), sum[j]);
    }
  }
  for (int j = 0; j < NT; ++j) acc[j] = sum[j];
}

}  // namespace

void panel_q4_0(const GemmTile& t) { panel_gemm<Block32Products<Q4_0Block>>(t); }
void panel_q4_1(const GemmTile& t) { panel_gemm<Block32Products<Q4_1Block>>(t); }
void panel_q5_0(const GemmTile& t) { panel_gemm<Block32Products<Q5_0Block>>(t); }
void panel_q5_1(const GemmTile& t) { panel_gemm<Block32Products<Q5_1Block>>(t); }
void panel_q8_0(const GemmTile& t) { panel_gemm<Block32Products<Q8_0Block>>(t); }
void panel_swiglu_q4_0(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q4_0Block>>(t, up); }
void panel_swiglu_q4_1(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q4_1Block>>(t, up); }
void panel_swiglu_q5_0(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q5_0Block>>(t, up); }
void panel_swiglu_q5_1(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q5_1Block>>(t, up); }
void panel_swiglu_q8_0(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q8_0Block>>(t, up); }

void panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  out[0] = {panel_q4_0, panel_swiglu_q4_0};
  out[1] = {panel_q4_1, panel_swiglu_q4_1};
  out[2] = {panel_q8_0, panel_swiglu_q8_0};
  out[3] = {panel_q4_k, panel_swiglu_q4_k};
  out[4] = {panel_q5_k, panel_swiglu_q5_k};
  out[5] = {panel_q6_k,         panel_swiglu_q6_k,           0, expand_q6_k,
            panel_q6_k_expanded, q6_k_expanded_block_bytes(), panel_swiglu_q6_k_expanded};
  out[6] = {panel_q5_0, panel_swiglu_q5_0};
  out[7] = {panel_q5_1, panel_swiglu_q5_1};
}

}  // namespace db::kernels::avx512vnni
#endif

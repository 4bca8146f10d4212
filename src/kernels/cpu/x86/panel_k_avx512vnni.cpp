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

// Q6_K's float scales d * float(sc) of chunk c's two sub-blocks (low: elements
// 0..15, high: 16..31) for the 16 lanes, from the super-block's d.
DB_PANEL_INLINE void q6k_chunk_scales(__m512 d, const uint8_t* codes, int c, __m512& low, __m512& high) {
  // Per lane the scales of sub-blocks 2c and 2c + 1 as two int16.
  const __m512i pair = _mm512_cvtepi8_epi16(load256(codes + KFormat<DType::Q6_K>::kScales + 32 * c));
  low = scaled_d(d, _mm512_srai_epi32(_mm512_slli_epi32(pair, 16), 16));
  high = scaled_d(d, _mm512_srai_epi32(pair, 16));
}

// Q6_K: adds chunk c of the super-block at activation slot `slot` (codes w,
// sub-block scales dsc_low / dsc_high) to each token's f[j]:
// f = fma(float(dot(g) + zsum16(g)), d * sc[g], f) for its two sub-blocks g,
// each dot product started from the token's zero-point term (a broadcast load).
template <int NT>
DB_PANEL_INLINE void q6k_chunk(const QuantizedActs& a, int64_t slot, int c, const __m512i (&w)[8], __m512 dsc_low,
                               __m512 dsc_high, __m512 (&f)[NT]) {
  const int8_t* q = chunk_acts(a, slot, c);
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

// Q6_K: f = 0, then per 32-element chunk q6k_chunk, then acc = fma(f, da, acc).
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
        __m512 dsc_low, dsc_high;
        q6k_chunk_scales(d, codes, c, dsc_low, dsc_high);
        q6k_chunk(a, slot, c, w, dsc_low, dsc_high, f);
      }
      add_super_block(a, slot, f, acc);
    });
  }
};

// The expanded Q6_K group: per super-block, per chunk, its 8 code registers
// (6-bit codes, one per byte) and then its two sub-block scale registers
// (d * float(sc), f32): 640 bytes, the unpacking and scale conversion that
// every token tile would otherwise repeat.
constexpr int64_t kQ6KExpandedChunkBytes = 8 * 64 + 2 * 64;
constexpr int64_t kQ6KExpandedBlockBytes = 8 * kQ6KExpandedChunkBytes;

}  // namespace

// Reads the group as the kernels do, prefetching its bytes ahead (and so the
// next group's): a group is expanded when the first token tile reaches it,
// straight from memory.
void expand_q6_k(const uint8_t* group, int64_t cols, uint8_t* out) {
  using F = KFormat<DType::Q6_K>;
  const int64_t nb = cols / 256;
  const uint8_t* headers = group + nb * F::kCodeBytes;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* codes = group + b * F::kCodeBytes;
    prefetch_ahead(group + b * F::kBlockBytes, F::kBlockBytes);
    const __m512 d = load_halves(headers + b * F::kHeaderBytes);
    for (int c = 0; c < 8; ++c) {
      uint8_t* e = out + b * kQ6KExpandedBlockBytes + c * kQ6KExpandedChunkBytes;
      __m512i w[8];
      load_chunk<DType::Q6_K>(codes, c, w);
      for (int i = 0; i < 8; ++i) _mm512_storeu_si512(e + 64 * i, w[i]);
      __m512 dsc_low, dsc_high;
      q6k_chunk_scales(d, codes, c, dsc_low, dsc_high);
      _mm512_storeu_ps(e + 512, dsc_low);
      _mm512_storeu_ps(e + 576, dsc_high);
    }
  }
}

namespace {

// Q6KProducts over an expanded group (the same operations on the same values).
struct Q6KExpandedProducts {
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    const QuantizedActs& a = *t.acts;
    const int64_t nb = t.cols / 256, slot0 = act_slot(a, t.t0, 0);
    for (int j = 0; j < NT; ++j) acc[j] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const int64_t slot = slot0 + b * kActTileTokens;
      __m512 f[NT];
      for (int j = 0; j < NT; ++j) f[j] = _mm512_setzero_ps();
      for (int c = 0; c < 8; ++c) {
        const uint8_t* e = group + b * kQ6KExpandedBlockBytes + c * kQ6KExpandedChunkBytes;
        __m512i w[8];
        for (int i = 0; i < 8; ++i) w[i] = load512(e + 64 * i);
        q6k_chunk(a, slot, c, w, _mm512_loadu_ps(e + 512), _mm512_loadu_ps(e + 576), f);
      }
      add_super_block(a, slot, f, acc);
    }
  }
};

}  // namespace

void panel_q4_k(const GemmTile& t) { panel_gemm<KMinProducts<DType::Q4_K>>(t); }
void panel_q5_k(const GemmTile& t) { panel_gemm<KMinProducts<DType::Q5_K>>(t); }
void panel_q6_k(const GemmTile& t) { panel_gemm<Q6KProducts>(t); }
void panel_q6_k_expanded(const GemmTile& t) { panel_gemm<Q6KExpandedProducts>(t); }
void panel_swiglu_q6_k_expanded(const GemmTile& t, const uint8_t* up) {
  panel_gemm_swiglu<Q6KExpandedProducts>(t, up);
}
int64_t q6_k_expanded_block_bytes() { return kQ6KExpandedBlockBytes; }
void panel_swiglu_q4_k(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<KMinProducts<DType::Q4_K>>(t, up); }
void panel_swiglu_q5_k(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<KMinProducts<DType::Q5_K>>(t, up); }
void panel_swiglu_q6_k(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Q6KProducts>(t, up); }

}  // namespace db::kernels::avx512vnni
#endif

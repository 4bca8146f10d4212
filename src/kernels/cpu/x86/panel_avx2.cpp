// AVX2 Panels16 kernels for 32-element blocks (layout and formula:
// kernels/cpu/panels.h; the AVX2 scheme: panel_avx2.h). A block's dot products
// for one token and 8 rows are 8 vpmaddubsw added in int16 and one vpmaddwd
// (5-bit codes: two, one per 16 elements), each activation broadcast serving
// both halves. Q8_0's 8-bit codes (q + 128,
// up to 255) would overflow vpmaddubsw's int16 sums, so they are split into
// nibbles (add_q8_0_block). Built as avx2vnni too (panel_avx2vnni.cpp):
// vpdpbusd into int32 instead, Q8_0's codes whole (panel_avx2.h).
#if defined(__x86_64__)
#include "kernels/cpu/x86/panel_avx2.h"
#include "kernels/quant_blocks.h"

namespace db::kernels::DB_PANEL_AVX2_NS {

namespace {

// A 4-bit or 5-bit block format: code width, zero point (8, 16: subtract
// via zsum; 0: none) and whether the header holds offsets m after the scales d.
template <int Bits, int ZeroPoint, bool HasMin>
struct Nibble32 {
  static_assert((Bits == 4 || Bits == 5) && (ZeroPoint == 0 || ZeroPoint == 8 || ZeroPoint == 16));
  static constexpr int kBits = Bits;
  static constexpr int kZeroPoint = ZeroPoint;
  static constexpr bool kHasMin = HasMin;
  static constexpr int64_t kCodeBytes = Bits == 5 ? kPanelFifthBits + 64 : 256, kHeaderBytes = HasMin ? 64 : 32;
  static constexpr int64_t kBlockBytes = kCodeBytes + kHeaderBytes;  // a block's slice of its group's bytes
};
using Q4_0Format = Nibble32<4, 8, false>;
using Q4_1Format = Nibble32<4, 0, true>;
using Q5_0Format = Nibble32<5, 16, false>;
using Q5_1Format = Nibble32<5, 0, true>;
// Q8_0: 8-bit codes q + 128, no offsets.
struct Q8_0Format {
  static constexpr int kZeroPoint = 128;
  static constexpr bool kHasMin = false;
  static constexpr int64_t kCodeBytes = 512, kHeaderBytes = 32;
  static constexpr int64_t kBlockBytes = kCodeBytes + kHeaderBytes;  // a block's slice of its group's bytes
};

// How many blocks ahead of the one being computed its bytes are prefetched.
constexpr int64_t kPrefetchBlocks32 = 8;

// Prefetches every cache line of the `bytes` bytes that start `ahead` bytes
// past `from`. Called once per block with that block's slice of its group's
// bytes, codes and headers together (block b: group + b * block bytes, block
// bytes long), so the calls of a group cover all of its bytes, streamed in
// the order the driver walks them (into the next group past this one's end):
// the hardware prefetcher alone keeps too few lines in flight when a block is
// read for a single token, and prefetching the codes alone left every header
// line to miss.
void prefetch_ahead(const uint8_t* from, int64_t bytes, int64_t ahead) {
  for (int64_t l = 0; l < bytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(from + ahead + l), _MM_HINT_T0);
  if (bytes % 64 != 0) _mm_prefetch(reinterpret_cast<const char*>(from + ahead + bytes - 1), _MM_HINT_T0);
}

// One token's activation terms in a block, broadcast: its scale d, d * sum(q)
// (the offsets' factor) and -zp * sum(q) (the zero point's term; zp 8 or 16).
struct TokenTerms {
  __m256 d, ds;
  __m256i zsum;
};

// The activation arrays a block's products read: QuantizedActs' arrays,
// copied to locals so that stores to the accumulators cannot alias them.
struct ActArrays {
  const int8_t* qs;
  const float *d, *ds;
  const int32_t* zsum;
};

// The terms of activation slot `slot`.
template <class W>
DB_PANEL_INLINE TokenTerms token_terms(const ActArrays& a, int64_t slot) {
  TokenTerms t{_mm256_set1_ps(a.d[slot]), _mm256_setzero_ps(), _mm256_setzero_si256()};
  if constexpr (W::kHasMin) t.ds = _mm256_set1_ps(a.ds[slot]);
  if constexpr (W::kZeroPoint == 8 || W::kZeroPoint == 16) t.zsum = _mm256_set1_epi32(W::kZeroPoint / 8 * a.zsum[slot]);
  return t;
}

// acc plus a block's products for one token (the formula of panels.h): s, its
// integer dot products (Q8_0: with the zero-point term), the block's scales d
// and offsets m of one half, and the token's terms.
template <class W>
DB_PANEL_INLINE __m256 add_block(__m256 acc, __m256i s, __m256 d, __m256 m, const TokenTerms& tt) {
  if constexpr (W::kZeroPoint == 8 || W::kZeroPoint == 16) s = _mm256_add_epi32(s, tt.zsum);
  if constexpr (W::kHasMin) acc = _mm256_fmadd_ps(m, tt.ds, acc);
  return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(d, tt.d), acc);
}

// The codes of part P (0: elements 0..15, 1: 16..31) of a block of format W,
// both halves (load_nibble_regs; 5-bit formats: with their fifth bits).
template <class W, int P>
DB_PANEL_INLINE void load_block_part(const uint8_t* codes, __m256i (&w)[kHalves][4]) {
  for (int h = 0; h < kHalves; ++h) {
    load_nibble_regs<4 * P>(codes, h, w[h]);
    if constexpr (W::kBits == 5) merge_fifth_bits<P>(codes + kPanelFifthBits, h, w[h]);
  }
}

// Adds a block of 4-bit or 5-bit format W to acc for tokens slot .. slot + NT - 1: the
// elements 0..15 of every token first, their sums kept, then 16..31, so that
// each activation broadcast serves both halves. Every token's integer work
// comes before any token's float steps, which runs faster than finishing one
// token at a time.
template <class W, int NT>
DB_PANEL_INLINE void add_nibble_block(const ActArrays& a, int64_t slot, const uint8_t* codes, const uint8_t* header,
                                      __m256 (&acc)[kHalves][NT]) {
  const int8_t* q = a.qs + slot * kQK;
  __m256i w[kHalves][4];
  ChunkDots<W::kBits> dots[NT];
  load_block_part<W, 0>(codes, w);
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) dots[j].first(w, q + j * kQK);
  load_block_part<W, 1>(codes, w);
  __m256 d[kHalves], m[kHalves];
  for (int h = 0; h < kHalves; ++h) {
    d[h] = load_halves(header + 16 * h);
    m[h] = W::kHasMin ? load_halves(header + 32 + 16 * h) : _mm256_setzero_ps();
  }
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) dots[j].second(w, q + j * kQK + 16);
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) {
    const TokenTerms tt = token_terms<W>(a, slot + j);
    __m256 r[kHalves];
    for (int h = 0; h < kHalves; ++h) r[h] = add_block<W>(acc[h][j], dots[j].total(h), d[h], m[h], tt);
    for (int h = 0; h < kHalves; ++h) acc[h][j] = r[h];
  }
}

#if defined(DB_PANEL_AVX_VNNI)
// Adds a Q8_0 block to acc for tokens slot .. slot + NT - 1: its codes (q +
// 128, up to 255) are vpdpbusd's unsigned operand as they are, and the dot
// product is dot(code) + 16 zsum (zsum = -8 sum(q)), the VNNI kernel's integer.
template <int NT>
DB_PANEL_INLINE void add_q8_0_block(const ActArrays& a, int64_t slot, const uint8_t* codes, const uint8_t* header,
                                    __m256 (&acc)[kHalves][NT]) {
  const int8_t* q = a.qs + slot * kQK;
  __m256i w[kHalves][4], s[kHalves][NT];
  for (int p = 0; p < 2; ++p) {  // elements 0..15, then 16..31
    for (int h = 0; h < kHalves; ++h)
      for (int i = 0; i < 4; ++i) w[h][i] = load256(codes + 256 * p + 64 * i + 32 * h);
#pragma GCC unroll 16
    for (int j = 0; j < NT; ++j) {
      if (p == 0) s[0][j] = s[1][j] = _mm256_slli_epi32(_mm256_set1_epi32(a.zsum[slot + j]), 4);
      add_dots16_halves(w, q + j * kQK + 16 * p, s[0][j], s[1][j]);
    }
  }
  __m256 d[kHalves];
  for (int h = 0; h < kHalves; ++h) d[h] = load_halves(header + 16 * h);
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) {
    const TokenTerms tt = token_terms<Q8_0Format>(a, slot + j);
    __m256 r[kHalves];
    for (int h = 0; h < kHalves; ++h) r[h] = add_block<Q8_0Format>(acc[h][j], s[h][j], d[h], _mm256_setzero_ps(), tt);
    for (int h = 0; h < kHalves; ++h) acc[h][j] = r[h];
  }
}
#else
// The int32 dot products of one nibble plane (Shift 0: low, 4: high) of a
// Q8_0 block with tokens j < NT, both halves: dot[h][j]. The plane's 8
// registers in two parts of 4 (elements 0..15, then 16..31), their int16 sums
// kept in between; 8 vpmaddubsw of nibbles stay below 32768 (15 * 128 * 2 * 8).
template <int Shift, int NT>
DB_PANEL_INLINE void q8_0_plane_dots(const uint8_t* codes, const int8_t* q, __m256i (&dot)[kHalves][NT]) {
  __m256i part[kHalves][NT], w[kHalves][4];
  for (int h = 0; h < kHalves; ++h) load_nibble_regs<Shift>(codes, h, w[h]);
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) dot16_halves(w, q + j * kQK, part[0][j], part[1][j]);
  for (int h = 0; h < kHalves; ++h) load_nibble_regs<Shift>(codes + 256, h, w[h]);
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) {
    __m256i rest[kHalves];
    dot16_halves(w, q + j * kQK + 16, rest[0], rest[1]);
    for (int h = 0; h < kHalves; ++h) dot[h][j] = widen(_mm256_add_epi16(part[h][j], rest[h]));
  }
}

// Adds a Q8_0 block to acc for tokens slot .. slot + NT - 1. Its codes (q +
// 128, up to 255) are split into nibbles, code = 16 hi + lo, and the dot
// product is dot(lo) + 16 (dot(hi) + zsum): twice the multiplies of a 4-bit
// block, the same integer as the VNNI kernel's.
template <int NT>
DB_PANEL_INLINE void add_q8_0_block(const ActArrays& a, int64_t slot, const uint8_t* codes, const uint8_t* header,
                                    __m256 (&acc)[kHalves][NT]) {
  const int8_t* q = a.qs + slot * kQK;
  __m256i lo[kHalves][NT], hi[kHalves][NT];
  q8_0_plane_dots<0>(codes, q, lo);
  q8_0_plane_dots<4>(codes, q, hi);
  __m256 d[kHalves];
  for (int h = 0; h < kHalves; ++h) d[h] = load_halves(header + 16 * h);
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) {
    const __m256i zsum = _mm256_set1_epi32(a.zsum[slot + j]);
    const TokenTerms tt = token_terms<Q8_0Format>(a, slot + j);
    __m256 r[kHalves];
    for (int h = 0; h < kHalves; ++h) {
      const __m256i s = _mm256_add_epi32(lo[h][j], _mm256_slli_epi32(_mm256_add_epi32(hi[h][j], zsum), 4));
      r[h] = add_block<Q8_0Format>(acc[h][j], s, d[h], _mm256_setzero_ps(), tt);
    }
    for (int h = 0; h < kHalves; ++h) acc[h][j] = r[h];
  }
}
#endif

// The products of a group in 32-element block format W (see run() in panel_avx2.h).
template <class W>
struct Block32Products {
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m256 (&acc)[kHalves][NT]) {
    const ActArrays a{t.acts->qs, t.acts->d, t.acts->ds, t.acts->zsum};
    const int64_t nb = t.cols / kQK;
    const uint8_t* headers = group + nb * W::kCodeBytes;
    for (int h = 0; h < kHalves; ++h)
      for (int j = 0; j < NT; ++j) acc[h][j] = _mm256_setzero_ps();
    const int64_t slot0 = act_slot(*t.acts, t.t0, 0);  // token t0 + j's block b: slot0 + b * kActTileTokens + j
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* codes = group + b * W::kCodeBytes;
      prefetch_ahead(group + b * W::kBlockBytes, W::kBlockBytes, kPrefetchBlocks32 * W::kBlockBytes);
      const int64_t slot = slot0 + b * kActTileTokens;
      auto& sums = pass_sums<NT>(acc);
      if constexpr (W::kZeroPoint == 128)
        add_q8_0_block(a, slot, codes, headers + b * W::kHeaderBytes, sums);
      else
        add_nibble_block<W>(a, slot, codes, headers + b * W::kHeaderBytes, sums);
    }
  }
};

}  // namespace

void panel_q4_0(const GemmTile& t) { panel_gemm<Block32Products<Q4_0Format>>(t); }
void panel_q4_1(const GemmTile& t) { panel_gemm<Block32Products<Q4_1Format>>(t); }
void panel_q5_0(const GemmTile& t) { panel_gemm<Block32Products<Q5_0Format>>(t); }
void panel_q5_1(const GemmTile& t) { panel_gemm<Block32Products<Q5_1Format>>(t); }
void panel_q8_0(const GemmTile& t) { panel_gemm<Block32Products<Q8_0Format>>(t); }
void panel_swiglu_q4_0(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q4_0Format>>(t, up); }
void panel_swiglu_q4_1(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q4_1Format>>(t, up); }
void panel_swiglu_q5_0(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q5_0Format>>(t, up); }
void panel_swiglu_q5_1(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q5_1Format>>(t, up); }
void panel_swiglu_q8_0(const GemmTile& t, const uint8_t* up) { panel_gemm_swiglu<Block32Products<Q8_0Format>>(t, up); }

void panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  out[0] = {panel_q4_0, panel_swiglu_q4_0};
  out[1] = {panel_q4_1, panel_swiglu_q4_1};
  out[2] = {panel_q8_0, panel_swiglu_q8_0};
  out[3] = {panel_q4_k, panel_swiglu_q4_k};
  out[4] = {panel_q5_k, panel_swiglu_q5_k};
  out[5] = {panel_q6_k, panel_swiglu_q6_k};
  out[6] = {panel_q5_0, panel_swiglu_q5_0};
  out[7] = {panel_q5_1, panel_swiglu_q5_1};
}

}  // namespace db::kernels::DB_PANEL_AVX2_NS
#endif

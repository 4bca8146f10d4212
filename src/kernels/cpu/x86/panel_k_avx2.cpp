// AVX2 Panels16 kernels for K-quant super-blocks (formula:
// kernels/cpu/panels.h; layout: kernels/cpu/panel_k_layout.h; the AVX2
// scheme: panel_avx2.h). Per 32-element chunk, half of a group (8 rows) and
// token: 8 vpmaddubsw (in two parts of 16 elements, both halves at once) added
// in int16 as far as the codes' width allows (Q4_K all 8, Q5_K 4, Q6_K 2),
// vpmaddwd by 1, then each sub-block's scale a
// convert and an FMA in float; the Q4_K / Q5_K mins 4 vpmaddwd per
// super-block against the token's 32-element sums, and the Q6_K zero point
// the starting value of each sub-block's dot products. Built as avx2vnni too
// (panel_k_avx2vnni.cpp): vpdpbusd into int32 instead (panel_avx2.h).
#if defined(__x86_64__)
#include "kernels/cpu/panel_k_layout.h"
#include "kernels/cpu/x86/panel_avx2.h"

namespace db::kernels::DB_PANEL_AVX2_NS {

namespace {

// Part P (0: elements 0..15, 1: 16..31) of half h of the codes of chunk c
// (elements 32c..32c+31) of a super-block: w[i] holds elements 16P + 4i .. +3
// of each of the half's rows.
template <DType T, int P>
DB_PANEL_INLINE void load_chunk_part(const uint8_t* codes, int c, int h, __m256i (&w)[4]) {
  load_nibble_regs<4 * P>(codes + 256 * c, h, w);
  if constexpr (T == DType::Q5_K) {
    merge_fifth_bits<P>(codes + kKLowBytes + 64 * c, h, w);
  } else if constexpr (T == DType::Q6_K) {  // bits 4-5 of element 4i + k: bits 2i, 2i + 1 of part P's byte
    const __m256i hb = load256(codes + kKLowBytes + 64 * (2 * c + P) + 32 * h), bits45 = _mm256_set1_epi8(0x30);
    w[0] = and_or(move_bits<0, 4>(hb), bits45, w[0]);
    w[1] = and_or(move_bits<2, 4>(hb), bits45, w[1]);
    w[2] = and_or(hb, bits45, w[2]);
    w[3] = and_or(move_bits<6, 4>(hb), bits45, w[3]);
  }
}

// Both halves' part P of chunk c (load_chunk_part).
template <DType T, int P>
DB_PANEL_INLINE void load_chunk_halves(const uint8_t* codes, int c, __m256i (&w)[kHalves][4]) {
  for (int h = 0; h < kHalves; ++h) load_chunk_part<T, P>(codes, c, h, w[h]);
}

// 8 bytes at p (one per row of a half) as int32 lanes, zero-extended.
__m256i load_u8x8(const uint8_t* p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))); }

// d * float(sc) for the 8 lanes' sub-block scales sc (int32).
__m256 scaled_d(__m256 d, __m256i sc) { return _mm256_mul_ps(d, _mm256_cvtepi32_ps(sc)); }

// How many super-blocks ahead of the one being computed its bytes are
// prefetched.
constexpr int64_t kPrefetchSuperBlocks = 2;

// Prefetches every cache line of the c-th eighth (c < 8) of a super-block's
// slice of its group's bytes, codes and header together, kPrefetchSuperBlocks
// slices past the one at `slice` (super-block b's slice: group + b * (code +
// header bytes)); so the calls of a group cover all of its bytes, streamed
// ahead into the next group. Spread over the chunks, so that no burst of
// prefetches overflows the core's queue of outstanding misses; codes and
// headers, as prefetching the codes alone left every header line to miss.
template <class F>
DB_PANEL_INLINE void prefetch_eighth(const uint8_t* slice, int c) {
  constexpr int64_t kEighth = F::kBlockBytes / 8;
  const uint8_t* ahead = slice + (kPrefetchSuperBlocks * 8 + c) * kEighth;
  for (int64_t l = 0; l < kEighth; l += 64) _mm_prefetch(reinterpret_cast<const char*>(ahead + l), _MM_HINT_T0);
  if (kEighth % 64 != 0) _mm_prefetch(reinterpret_cast<const char*>(ahead + kEighth - 1), _MM_HINT_T0);
}

// Prefetches the c-th eighth (c < 8) of the codes of the super-block
// kPrefetchSuperBlocks past the one at `codes`, lines only: for Q6_K, whose
// headers are 1/105 of its stream, this streams faster than prefetch_eighth's
// slices, which suit Q4_K (bench/kernels/README.md).
template <class F>
DB_PANEL_INLINE void prefetch_codes_eighth(const uint8_t* codes, int c) {
  constexpr int64_t lines = F::kCodeBytes / 64;
  const uint8_t* ahead = codes + kPrefetchSuperBlocks * F::kCodeBytes;
  for (int64_t l = c * lines / 8; l < (c + 1) * lines / 8; ++l)
    _mm_prefetch(reinterpret_cast<const char*>(ahead + 64 * l), _MM_HINT_T0);
}

// The activation arrays the K-quant products read (QuantizedActs' arrays,
// copied to locals so that stores to the sums cannot alias them).
struct KActs {
  const int8_t* qs;
  const float* d;
  const int16_t* bsum32;
  const int32_t* zsum16;
};

// Zeroes acc, then calls body(acts, slot, codes, header, slice, acc) for each
// super-block of the group, slice being its slice of the group's bytes (the
// body prefetches ahead per chunk: prefetch_eighth from the slice, or
// prefetch_codes_eighth from the codes); slot + j is token t0 + j's
// activation slot in that super-block.
template <class F, int NT, class Body>
DB_PANEL_INLINE void for_each_super_block(const GemmTile& t, const uint8_t* group, __m256 (&acc)[kHalves][NT],
                                          const Body& body) {
  const KActs acts{t.acts->qs, t.acts->d, t.acts->bsum32, t.acts->zsum16};
  const int64_t nb = t.cols / 256, slot0 = act_slot(*t.acts, t.t0, 0);
  for (int h = 0; h < kHalves; ++h)
    for (int j = 0; j < NT; ++j) acc[h][j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* codes = group + b * F::kCodeBytes;
    const uint8_t* slice = group + b * F::kBlockBytes;
    body(acts, slot0 + b * kActTileTokens, codes, group + nb * F::kCodeBytes + b * F::kHeaderBytes, slice,
         pass_sums<NT>(acc));
  }
}

// acc[h][j] = fma(f[h][j], da, acc[h][j]) with token j's super-block scale da.
template <int NT>
DB_PANEL_INLINE void add_super_block(const KActs& a, int64_t slot, const __m256 (&f)[kHalves][NT],
                                     __m256 (&acc)[kHalves][NT]) {
  for (int h = 0; h < kHalves; ++h)
    for (int j = 0; j < NT; ++j) acc[h][j] = _mm256_fmadd_ps(f[h][j], _mm256_set1_ps(a.d[slot + j]), acc[h][j]);
}

// Q4_K / Q5_K: f = float(sum_s mn[s] bsum32(s)) * -dmin, then per chunk s
// f = fma(float(dot(s)), d * sc[s], f).
template <DType T>
struct KMinProducts {
  using F = KFormat<T>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m256 (&acc)[kHalves][NT]) {
    for_each_super_block<F>(t, group, acc, [](const KActs& a, int64_t slot, const uint8_t* codes,
                                              const uint8_t* header, const uint8_t* slice,
                                              __m256(&acc_sb)[kHalves][NT]) {
      __m256 f[kHalves][NT];
#pragma GCC unroll 2
      for (int h = 0; h < kHalves; ++h) {
        // Per lane the mins of sub-blocks 2p and 2p + 1 as two int16: one
        // vpmaddwd multiplies them by the token's two 32-element sums.
        __m256i mins[4];
        for (int p = 0; p < 4; ++p) {
          const uint8_t* m = codes + F::kScales + 128 + 32 * p + 8 * h;
          mins[p] = _mm256_or_si256(load_u8x8(m), _mm256_slli_epi32(load_u8x8(m + 16), 16));
        }
        const __m256 neg_dmin = _mm256_sub_ps(_mm256_setzero_ps(), load_halves(header + 32 + 16 * h));
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) {
          const int16_t* bsum32 = a.bsum32 + (slot + j) * 8;
          __m256i m = _mm256_madd_epi16(mins[0], broadcast4(bsum32));
          for (int p = 1; p < 4; ++p) m = _mm256_add_epi32(m, _mm256_madd_epi16(mins[p], broadcast4(bsum32 + 2 * p)));
          f[h][j] = _mm256_mul_ps(_mm256_cvtepi32_ps(m), neg_dmin);
        }
      }
      for (int c = 0; c < 8; ++c) {
        prefetch_eighth<F>(slice, c);
        auto& sums = pass_sums<NT>(f);
        const int8_t* q = a.qs + slot * 256 + 32 * c;  // token j's at + 256 j
        __m256 dsc[kHalves];
        for (int h = 0; h < kHalves; ++h)
          dsc[h] = scaled_d(load_halves(header + 16 * h), load_u8x8(codes + F::kScales + 16 * c + 8 * h));
        // Elements 0..15 of every token first, then 16..31 (as add_nibble_block).
        ChunkDots<T == DType::Q4_K ? 4 : 5> dots[NT];
        __m256i w[kHalves][4];
        load_chunk_halves<T, 0>(codes, c, w);
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) dots[j].first(w, q + 256 * j);
        load_chunk_halves<T, 1>(codes, c, w);
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j) dots[j].second(w, q + 256 * j + 16);
#pragma GCC unroll 16
        for (int j = 0; j < NT; ++j)
          for (int h = 0; h < kHalves; ++h)
            sums[h][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dots[j].total(h)), dsc[h], sums[h][j]);
      }
      add_super_block(a, slot, f, acc_sb);
    });
  }
};

// f[h][j] = fma(float(dot + zsum16), dsc[h], f[h][j]) for tokens j < NT and
// sub-block 2c + G of a super-block, part G of its chunk c; the codes'
// products are added in int16 two at a time (6-bit codes).
template <int G, int NT>
DB_PANEL_INLINE void add_q6_k_sub_block(const KActs& a, int64_t slot, const uint8_t* codes, int c,
                                        const __m256 (&dsc)[kHalves], __m256 (&f)[kHalves][NT]) {
  __m256i w[kHalves][4];
  load_chunk_halves<DType::Q6_K, G>(codes, c, w);
  const int8_t* q = a.qs + slot * 256 + 32 * c + 16 * G;  // token j's at + 256 j
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) {
    const __m256i zsum16 = _mm256_set1_epi32(a.zsum16[(slot + j) * 16 + 2 * c + G]);
    __m256i s[kHalves];
#if defined(DB_PANEL_AVX_VNNI)
    s[0] = s[1] = zsum16;
    add_dots16_halves(w, q + 256 * j, s[0], s[1]);
#else
    __m256i p01[kHalves], p23[kHalves];
    dot8x2_halves(w, q + 256 * j, p01, p23);
    for (int h = 0; h < kHalves; ++h) s[h] = _mm256_add_epi32(_mm256_add_epi32(zsum16, widen(p01[h])), widen(p23[h]));
#endif
    __m256 r[kHalves];
    for (int h = 0; h < kHalves; ++h) r[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[h]), dsc[h], f[h][j]);
    for (int h = 0; h < kHalves; ++h) f[h][j] = r[h];
  }
}

// Q6_K: f = 0, then per 16-element sub-block g
// f = fma(float(dot(g) + zsum16(g)), d * sc[g], f), each dot product started
// from the token's zero-point term.
struct Q6KProducts {
  using F = KFormat<DType::Q6_K>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m256 (&acc)[kHalves][NT]) {
    for_each_super_block<F>(t, group, acc, [](const KActs& a, int64_t slot, const uint8_t* codes,
                                              const uint8_t* header, const uint8_t* /*slice*/,
                                              __m256(&acc_sb)[kHalves][NT]) {
      __m256 f[kHalves][NT];
      for (int h = 0; h < kHalves; ++h)
        for (int j = 0; j < NT; ++j) f[h][j] = _mm256_setzero_ps();
      for (int c = 0; c < 8; ++c) {
        prefetch_codes_eighth<F>(codes, c);
        auto& sums = pass_sums<NT>(f);
        __m256 dsc[2][kHalves];  // [sub-block 2c + g][half]
        for (int h = 0; h < kHalves; ++h) {
          const __m256 d = load_halves(header + 16 * h);
          // Per lane the scales of sub-blocks 2c and 2c + 1 as two int16.
          const __m256i pair = _mm256_cvtepi8_epi16(load128(codes + F::kScales + 32 * c + 16 * h));
          dsc[0][h] = scaled_d(d, _mm256_srai_epi32(_mm256_slli_epi32(pair, 16), 16));
          dsc[1][h] = scaled_d(d, _mm256_srai_epi32(pair, 16));
        }
        add_q6_k_sub_block<0>(a, slot, codes, c, dsc[0], sums);
        add_q6_k_sub_block<1>(a, slot, codes, c, dsc[1], sums);
      }
      add_super_block(a, slot, f, acc_sb);
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

}  // namespace db::kernels::DB_PANEL_AVX2_NS
#endif

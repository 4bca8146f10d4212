// AVX2 kernels for K-quant weights (Q4_K, Q5_K, Q6_K) against Q8x256
// activations. A weight super-block is decoded chunk by chunk (32 codes and a
// 16-bit scale per 16 codes); integer sums are scaled per sub-block with madd
// and converted to float once per super-block.
#if defined(__x86_64__)
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/tile_dispatch.h"
#include "kernels/quant_blocks.h"
#include "util/fp16.h"

namespace db::kernels::avx2 {

namespace {

// Sub-tile shape of the K-quant kernels (fewer registers than the 32-block ones).
constexpr int kRows = 2, kTokens = 2;

// 8 six-bit mins as 16 int16, each repeated twice (one per 16 activations).
__m256i mins_per16(const uint8_t m[8]) {
  const __m128i v = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(m)));
  return _mm256_set_m128i(_mm_unpackhi_epi16(v, v), _mm_unpacklo_epi16(v, v));
}

// Q4_K: chunk k (elements 32k..32k+32) is sub-block k: nibbles of qs[32(k/2)..], low for even k.
struct Q4K {
  static constexpr bool kHasMins = true;
  const BlockQ4_K* blocks;
  const uint8_t* qs;
  uint8_t sc[8], m[8];
  float d, dmin;
  __m256i mins16;
  void begin(int64_t b) {
    const BlockQ4_K& x = blocks[b];
    qs = x.qs;
    unpack_scales_k4(x.scales, sc, m);
    d = fp16_to_f32(load_u16(x.d));
    dmin = fp16_to_f32(load_u16(x.dmin));
    mins16 = mins_per16(m);
  }
  __m256i codes(int k) const {
    const __m256i v = load256(qs + 32 * (k / 2));
    return _mm256_and_si256(k % 2 ? _mm256_srli_epi16(v, 4) : v, _mm256_set1_epi8(0x0F));
  }
  __m256i scale(int k) const { return _mm256_set1_epi16(sc[k]); }
  __m256i init(__m256i) const { return _mm256_setzero_si256(); }
};

// Q5_K: Q4_K codes plus bit k of qh[l] worth 16.
struct Q5K {
  static constexpr bool kHasMins = true;
  const BlockQ5_K* blocks;
  const uint8_t* qs;
  __m256i qh;
  uint8_t sc[8], m[8];
  float d, dmin;
  __m256i mins16;
  void begin(int64_t b) {
    const BlockQ5_K& x = blocks[b];
    qs = x.qs;
    qh = load256(x.qh);
    unpack_scales_k4(x.scales, sc, m);
    d = fp16_to_f32(load_u16(x.d));
    dmin = fp16_to_f32(load_u16(x.dmin));
    mins16 = mins_per16(m);
  }
  __m256i codes(int k) const {
    const __m256i v = load256(qs + 32 * (k / 2));
    const __m256i lo = _mm256_and_si256(k % 2 ? _mm256_srli_epi16(v, 4) : v, _mm256_set1_epi8(0x0F));
    const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(qh, k), _mm256_set1_epi8(1));
    return _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4));
  }
  __m256i scale(int k) const { return _mm256_set1_epi16(sc[k]); }
  __m256i init(__m256i) const { return _mm256_setzero_si256(); }
};

// Q6_K: chunk k = 4h + i (elements 128h + 32i + l) takes nibble i/2 of ql[64h + 32(i%2) + l]
// and bits 2i..2i+1 of qh[32h + l]; codes are offset by 32, removed through the bsums.
struct Q6K {
  static constexpr bool kHasMins = false;
  const BlockQ6_K* blocks;
  const BlockQ6_K* x;
  float d;
  __m256i sc16;
  void begin(int64_t b) {
    x = &blocks[b];
    d = fp16_to_f32(load_u16(x->d));
    sc16 = _mm256_cvtepi8_epi16(load128(x->scales));
  }
  __m256i codes(int k) const {
    const int h = k / 4, i = k % 4;
    const __m256i l = load256(x->ql + 64 * h + 32 * (i % 2));
    const __m256i lo = _mm256_and_si256(i / 2 ? _mm256_srli_epi16(l, 4) : l, _mm256_set1_epi8(0x0F));
    const __m256i hb = _mm256_and_si256(_mm256_srli_epi16(load256(x->qh + 32 * h), 2 * i), _mm256_set1_epi8(3));
    return _mm256_or_si256(lo, _mm256_slli_epi16(hb, 4));
  }
  __m256i scale(int k) const {
    return _mm256_set_m128i(_mm_set1_epi16(x->scales[2 * k + 1]), _mm_set1_epi16(x->scales[2 * k]));
  }
  // -32 * sum_g sc[g] * bsum[g]
  __m256i init(__m256i bsums16) const {
    return _mm256_slli_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), _mm256_madd_epi16(sc16, bsums16)), 5);
  }
};

template <class B>
struct KKernel {
  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    const QuantizedActs& acts = *t.acts;
    B w[NR];
    for (int r = 0; r < NR; ++r) w[r].blocks = reinterpret_cast<decltype(w[r].blocks)>(s.w + r * t.w_stride);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) acc[r][j] = _mm256_setzero_ps();
    for (int64_t b = 0; b < acts.nblocks; ++b) {
      for (int r = 0; r < NR; ++r) w[r].begin(b);
      const int8_t* aq[NT];
      __m256i bsums[NT];
      __m256i isum[NR][NT];
      for (int j = 0; j < NT; ++j) {
        aq[j] = acts.qs + (s.t0 + j) * acts.qs_stride + 256 * b;
        bsums[j] = load256(acts.bsums + ((s.t0 + j) * acts.nblocks + b) * 16);
        for (int r = 0; r < NR; ++r) isum[r][j] = w[r].init(bsums[j]);
      }
      for (int k = 0; k < 8; ++k) {
        __m256i codes[NR], scale[NR];
        for (int r = 0; r < NR; ++r) {
          codes[r] = w[r].codes(k);
          scale[r] = w[r].scale(k);
        }
        for (int j = 0; j < NT; ++j) {
          const __m256i a = load256(aq[j] + 32 * k);
          for (int r = 0; r < NR; ++r)
            isum[r][j] = _mm256_add_epi32(isum[r][j], _mm256_madd_epi16(_mm256_maddubs_epi16(codes[r], a), scale[r]));
        }
      }
      for (int j = 0; j < NT; ++j) {
        const float da = acts.d[(s.t0 + j) * acts.nblocks + b];
        for (int r = 0; r < NR; ++r) {
          acc[r][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[r][j]), _mm256_set1_ps(w[r].d * da), acc[r][j]);
          if constexpr (B::kHasMins) {
            const __m256i mins = _mm256_madd_epi16(w[r].mins16, bsums[j]);
            acc[r][j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(mins), _mm256_set1_ps(-w[r].dmin * da), acc[r][j]);
          }
        }
      }
    }
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) s.y[j * t.ldy + r] = hsum_ps(acc[r][j]);
  }
};

}  // namespace

void gemm_q4_k(const GemmTile& t) { dispatch_tile<KKernel<Q4K>, kRows, kTokens>(t); }
void gemm_q5_k(const GemmTile& t) { dispatch_tile<KKernel<Q5K>, kRows, kTokens>(t); }
void gemm_q6_k(const GemmTile& t) { dispatch_tile<KKernel<Q6K>, kRows, kTokens>(t); }

}  // namespace db::kernels::avx2
#endif

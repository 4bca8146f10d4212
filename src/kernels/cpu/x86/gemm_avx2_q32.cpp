// AVX2 kernels for 32-element block weights (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0)
// against Q8x32 activations. Per block: integer dot of 32 codes (maddubs + madd;
// 5-bit codes keep the int16 pair sums below 2 * 31 * 127) into 8 int32 lanes,
// converted and scaled into a float accumulator per (row, token).
#if defined(__x86_64__)
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/tile_dispatch.h"
#include "kernels/quant_blocks.h"
#include "util/fp16.h"

namespace db::kernels::avx2 {

namespace {

// Per-token pointers into the quantized activations.
struct Acts {
  const int8_t* q;
  const float* d;
  const float* ds;
};

static Acts acts_of(const QuantizedActs& a, int64_t t) {
  return Acts{a.qs + t * a.qs_stride, a.d + t * a.nblocks, a.ds + t * a.nblocks};
}

template <int NR, int NT>
void store_tile(const GemmTile& t, const SubTile& s, const __m256 (&acc)[NR][NT]) {
  for (int r = 0; r < NR; ++r)
    for (int j = 0; j < NT; ++j) s.y[j * t.ldy + r] = hsum_ps(acc[r][j]);
}

// The 32 codes of a block in element order: the nibbles, and for Q5_0 / Q5_1
// the fifth bits (bit k of qh: element k) added as 16.
template <class Block>
__m256i block_codes(const Block& w) {
  const __m256i nibbles = unpack_nibbles32(w.qs);
  if constexpr (requires { w.qh; }) {
    // Byte k holds byte k / 8 of qh; the bit of it selected for byte k is element k's.
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(load_qh(w.qh))),
                                               _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202,
                                                                  0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_or_si256(nibbles, _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
  } else {
    return nibbles;
  }
}

// Q4_0 (ZeroPoint 8) and Q5_0 (16): sum_b dw * (da * dot(q, a) - ZeroPoint * ds):
// each of the 8 lanes subtracts ZeroPoint / 8 * ds.
template <class Block, int ZeroPoint>
struct SymmetricKernel {
  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    const Block* w[NR];
    for (int r = 0; r < NR; ++r) w[r] = reinterpret_cast<const Block*>(s.w + r * t.w_stride);
    Acts a[NT];
    for (int j = 0; j < NT; ++j) a[j] = acts_of(*t.acts, s.t0 + j);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) acc[r][j] = _mm256_setzero_ps();
    const int64_t nb = t.cols / kQK;
    for (int64_t b = 0; b < nb; ++b) {
      __m256i wq[NR];
      __m256 dw[NR];
      for (int r = 0; r < NR; ++r) {
        wq[r] = block_codes(w[r][b]);
        dw[r] = _mm256_set1_ps(fp16_to_f32(load_u16(w[r][b].d)));
      }
      for (int j = 0; j < NT; ++j) {
        const __m256i aq = load256(a[j].q + 32 * b);
        const __m256 da = _mm256_set1_ps(a[j].d[b]);
        const __m256 nds = _mm256_set1_ps(-static_cast<float>(ZeroPoint / 8) * a[j].ds[b]);
        for (int r = 0; r < NR; ++r) {
          const __m256 p = _mm256_cvtepi32_ps(dot_u8s8(wq[r], aq));
          acc[r][j] = _mm256_fmadd_ps(_mm256_fmadd_ps(p, da, nds), dw[r], acc[r][j]);
        }
      }
    }
    store_tile<NR, NT>(t, s, acc);
  }
};

// Q4_1 and Q5_1: sum_b dw * da * dot(q, a) + m * ds: each of the 8 lanes adds m * ds / 8.
template <class Block>
struct OffsetKernel {
  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    const Block* w[NR];
    for (int r = 0; r < NR; ++r) w[r] = reinterpret_cast<const Block*>(s.w + r * t.w_stride);
    Acts a[NT];
    for (int j = 0; j < NT; ++j) a[j] = acts_of(*t.acts, s.t0 + j);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) acc[r][j] = _mm256_setzero_ps();
    const int64_t nb = t.cols / kQK;
    for (int64_t b = 0; b < nb; ++b) {
      __m256i wq[NR];
      __m256 dw[NR], mw[NR];
      for (int r = 0; r < NR; ++r) {
        wq[r] = block_codes(w[r][b]);
        dw[r] = _mm256_set1_ps(fp16_to_f32(load_u16(w[r][b].d)));
        mw[r] = _mm256_set1_ps(fp16_to_f32(load_u16(w[r][b].m)));
      }
      for (int j = 0; j < NT; ++j) {
        const __m256i aq = load256(a[j].q + 32 * b);
        const __m256 da = _mm256_set1_ps(a[j].d[b]);
        const __m256 ds8 = _mm256_set1_ps(a[j].ds[b] * 0.125f);
        for (int r = 0; r < NR; ++r) {
          const __m256 p = _mm256_cvtepi32_ps(dot_u8s8(wq[r], aq));
          acc[r][j] = _mm256_fmadd_ps(_mm256_mul_ps(p, da), dw[r], _mm256_fmadd_ps(mw[r], ds8, acc[r][j]));
        }
      }
    }
    store_tile<NR, NT>(t, s, acc);
  }
};

// sum_b dw * da * dot(w, a) with signed codes: dot(|w|, a * sign(w)).
struct Q8_0Kernel {
  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    const BlockQ8_0* w[NR];
    for (int r = 0; r < NR; ++r) w[r] = reinterpret_cast<const BlockQ8_0*>(s.w + r * t.w_stride);
    Acts a[NT];
    for (int j = 0; j < NT; ++j) a[j] = acts_of(*t.acts, s.t0 + j);
    __m256 acc[NR][NT];
    for (int r = 0; r < NR; ++r)
      for (int j = 0; j < NT; ++j) acc[r][j] = _mm256_setzero_ps();
    const int64_t nb = t.cols / kQK;
    for (int64_t b = 0; b < nb; ++b) {
      __m256i wq[NR], wabs[NR];
      __m256 dw[NR];
      for (int r = 0; r < NR; ++r) {
        wq[r] = load256(w[r][b].qs);
        wabs[r] = _mm256_sign_epi8(wq[r], wq[r]);
        dw[r] = _mm256_set1_ps(fp16_to_f32(load_u16(w[r][b].d)));
      }
      for (int j = 0; j < NT; ++j) {
        const __m256i aq = load256(a[j].q + 32 * b);
        const __m256 da = _mm256_set1_ps(a[j].d[b]);
        for (int r = 0; r < NR; ++r) {
          const __m256 p = _mm256_cvtepi32_ps(dot_u8s8(wabs[r], _mm256_sign_epi8(aq, wq[r])));
          acc[r][j] = _mm256_fmadd_ps(_mm256_mul_ps(p, da), dw[r], acc[r][j]);
        }
      }
    }
    store_tile<NR, NT>(t, s, acc);
  }
};

}  // namespace

void gemm_q4_0(const GemmTile& t) { dispatch_tile<SymmetricKernel<BlockQ4_0, 8>, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_q4_1(const GemmTile& t) { dispatch_tile<OffsetKernel<BlockQ4_1>, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_q5_0(const GemmTile& t) { dispatch_tile<SymmetricKernel<BlockQ5_0, 16>, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_q5_1(const GemmTile& t) { dispatch_tile<OffsetKernel<BlockQ5_1>, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_q8_0(const GemmTile& t) { dispatch_tile<Q8_0Kernel, kAvx2TileRows, kAvx2TileTokens>(t); }

}  // namespace db::kernels::avx2
#endif

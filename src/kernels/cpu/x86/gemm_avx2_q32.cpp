// AVX2 kernels for 32-element block weights (Q4_0, Q4_1, Q8_0) against Q8x32
// activations. Per block: integer dot of 32 codes (maddubs + madd) into 8 int32
// lanes, converted and scaled into a float accumulator per (row, token).
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

// sum_b dw * (da * dot(q, a) - 8 * ds): each of the 8 lanes subtracts ds once.
struct Q4_0Kernel {
  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    const BlockQ4_0* w[NR];
    for (int r = 0; r < NR; ++r) w[r] = reinterpret_cast<const BlockQ4_0*>(s.w + r * t.w_stride);
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
        wq[r] = unpack_nibbles32(w[r][b].qs);
        dw[r] = _mm256_set1_ps(fp16_to_f32(load_u16(w[r][b].d)));
      }
      for (int j = 0; j < NT; ++j) {
        const __m256i aq = load256(a[j].q + 32 * b);
        const __m256 da = _mm256_set1_ps(a[j].d[b]);
        const __m256 nds = _mm256_set1_ps(-a[j].ds[b]);
        for (int r = 0; r < NR; ++r) {
          const __m256 p = _mm256_cvtepi32_ps(dot_u8s8(wq[r], aq));
          acc[r][j] = _mm256_fmadd_ps(_mm256_fmadd_ps(p, da, nds), dw[r], acc[r][j]);
        }
      }
    }
    store_tile<NR, NT>(t, s, acc);
  }
};

// sum_b dw * da * dot(q, a) + m * ds: each of the 8 lanes adds m * ds / 8.
struct Q4_1Kernel {
  template <int NR, int NT>
  static void run(const GemmTile& t, const SubTile& s) {
    const BlockQ4_1* w[NR];
    for (int r = 0; r < NR; ++r) w[r] = reinterpret_cast<const BlockQ4_1*>(s.w + r * t.w_stride);
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
        wq[r] = unpack_nibbles32(w[r][b].qs);
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

void gemm_q4_0(const GemmTile& t) { dispatch_tile<Q4_0Kernel, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_q4_1(const GemmTile& t) { dispatch_tile<Q4_1Kernel, kAvx2TileRows, kAvx2TileTokens>(t); }
void gemm_q8_0(const GemmTile& t) { dispatch_tile<Q8_0Kernel, kAvx2TileRows, kAvx2TileTokens>(t); }

}  // namespace db::kernels::avx2
#endif

// AVX-512 (F/BW/VL) paged-attention tile kernel.
//
// Per chunk of 16 keys and per kv head, the tile converts the keys and values
// to f32 once; then every query of the tile that reaches the chunk (rows x group
// heads) is folded in, four at a time so that they share key and value loads.
// With few queries per key (decode) and an F16 or Q8_0 cache, the queries read
// the rows in place instead, converting in registers (Q8_0: code * scale, the
// product the f32 copy holds): the copy's store and reload cost more than the
// extra conversions. They go up to eight at a time
// (a decode row's query heads of one kv head), so that each key and value
// block is converted once for all of them rather than once per query
// (measurements: bench/kernels/README.md).
// A query's 16 scores end up in one register, one lane per key; its softmax
// state is a reference maximum m and per-lane sums of exp(score - m), so the
// only horizontal work per chunk is a compare, and a max when m moves.
//
// Scores come from one of two layouts with bit-identical results: with few
// queries (decode) the queries multiply the key rows and reduce each query's
// 16 partial vectors with a transpose-and-add tree; with many (prefill) the keys
// are transposed once per chunk to [head_dim][16] and each query's scores are
// broadcast-FMAs into 16 lane chains combined by the same tree. Per key, both
// compute lane chains c[l] = sum over i = l (mod 16) of q[i] * k[i] (FMAs in
// increasing i, from 0) and then ((c0+c2)+(c1+c3)) + ((c4+c6)+(c5+c7)) + ...
// exactly as reduce16() adds them, so the choice never changes a result.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cpu/attention_load_rows.h"
#include "kernels/cpu/attention_ops.h"
#include "kernels/cpu/attention_spans.h"
#include "kernels/cpu/x86/avx512_util.h"
#include "kernels/cpu/x86/exp_avx512.h"
#include "kernels/quant_blocks.h"

namespace db::kernels {

namespace {

constexpr int kBlockQ = 4;               // queries folded into a chunk together on transposed keys
constexpr int kBlockQRows = 8;           // ... on key rows, which every query of a block reads once
static_assert(kBlockQRows * kKeysPerChunk <= kTileBlockFloats, "a block's weights fit the tile scratch");
constexpr int kTransposeMinQueries = 8;  // queries of a chunk from which its keys are transposed
constexpr float kRescaleSlack = 8.0f;    // how far a score may exceed its query's reference maximum

#define DB_INLINE [[gnu::always_inline]] inline

// Lanes [0, n) set (n <= 16).
__mmask16 first_lanes(int n) { return static_cast<__mmask16>((1u << n) - 1u); }

// 16 F16 or BF16 values as f32.
__m512 to_f32(__m256i h, DType dtype) {
  return dtype == DType::F16 ? _mm512_cvtph_ps(h)
                             : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// out[0..d) = src[0..d) as f32 (F16 or BF16 source).
void convert_row(const uint8_t* src, DType dtype, int d, float* out) {
  int i = 0;
  for (; i + 16 <= d; i += 16)
    _mm512_storeu_ps(out + i, to_f32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i)), dtype));
  if (i < d) {
    const __mmask16 m = first_lanes(d - i);
    _mm512_mask_storeu_ps(out + i, m, to_f32(_mm256_maskz_loadu_epi16(m, src + 2 * i), dtype));
  }
}

// out[0..n) = codes[0..n) * scale (a run of one Q8_0 block, n <= 32), 16
// codes per step, the last step masked: the same products as the portable level's.
void avx512_dequant_run(const int8_t* codes, float scale, int n, float* out) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int i = 0; i < n; i += 16) {
    const __mmask16 m = first_lanes(n - i < 16 ? n - i : 16);
    const __m512i q = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, codes + i));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(q), s));
  }
}

// dst[r * dpad + 0..d) = kv head `head` of cache slot slots[r] as f32, r < n_rows.
void load_rows(const void* base, DType dtype, const int64_t* slots, int n_rows, int64_t row_stride, int head, int d,
               int dpad, float* dst) {
  load_rows_with(convert_row, avx512_dequant_run, base, dtype, slots, n_rows, row_stride, head, d, dpad, dst);
}

// Where a chunk's 16 key or value rows are read from, 16 floats at a time:
// block b of row j. ScratchRows: the f32 rows load_rows() wrote; HalfRows: F16
// rows read in place from the cache and converted in registers (exactly, so
// both give the same values).
struct ScratchRows {
  const float* base;
  int dpad;
  __m512 load(int j, int b) const { return _mm512_load_ps(base + j * dpad + 16 * b); }
};
struct HalfRows {
  const uint8_t* const* rows;  // [16] a head's row of each key
  __m512 load(int j, int b) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[j] + 32 * b)));
  }
};
// Q8_0 rows read in place: rows[j] is the first 34-byte block of the head
// (which starts a block: head width a multiple of 32), so 16-float block b is
// half b % 2 of Q8_0 block b / 2; code * scale in f32, as dequant_kv_q8_0_with().
struct Q8Rows {
  const uint8_t* const* rows;
  __m512 load(int j, int b) const {
    const auto* block = reinterpret_cast<const BlockQ8_0*>(rows[j]) + b / 2;
    const __m512i q = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block->qs + 16 * (b % 2))));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(q), _mm512_set1_ps(_cvtsh_ss(load_u16(block->d))));
  }
};

// v[j] (j < 16) -> one register whose lane j is the sum of v[j]'s lanes (the tree in the file comment).
DB_INLINE __m512 reduce16(const __m512 (&v)[16]) {
  return transpose_reduce16(v, [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); });
}

// Unscaled scores of NQ queries against the same 16 key rows of NB 16-float
// blocks (zero padded). Each key block is loaded (and converted) once for all
// the queries; per (query, key) an NB-long FMA chain in increasing block order,
// from 0, then the tree of reduce16(), its stages applied as the keys of a pair
// or a quad are done. KG keys at a time keep the partial sums in registers.
template <int NQ, int NB, class Rows>
DB_INLINE void scores_rows(const float* const* q, const Rows& keys, __m512* s) {
  constexpr int KG = NQ <= 3 ? 4 : 2;  // keys in flight: NQ * KG partial sums
  const auto add = [](__m512 a, __m512 b) { return _mm512_add_ps(a, b); };
  __m512 pair[NQ][8], quad[NQ][4];
#pragma GCC unroll 16
  for (int j0 = 0; j0 < 16; j0 += KG) {
    __m512 part[NQ][KG];
#pragma GCC unroll 16
    for (int b = 0; b < NB; ++b) {
      __m512 k[KG];
#pragma GCC unroll 16
      for (int i = 0; i < KG; ++i) k[i] = keys.load(j0 + i, b);
#pragma GCC unroll 16
      for (int n = 0; n < NQ; ++n) {
        const __m512 qv = _mm512_load_ps(q[n] + 16 * b);
#pragma GCC unroll 16
        for (int i = 0; i < KG; ++i) part[n][i] = _mm512_fmadd_ps(qv, k[i], b == 0 ? _mm512_setzero_ps() : part[n][i]);
      }
    }
#pragma GCC unroll 16
    for (int n = 0; n < NQ; ++n) {
#pragma GCC unroll 16
      for (int i = 0; i < KG; i += 2) pair[n][(j0 + i) / 2] = reduce_pair(part[n][i], part[n][i + 1], add);
      if ((j0 + KG) % 4 == 0)
        quad[n][(j0 + KG) / 4 - 1] = reduce_quad(pair[n][(j0 + KG) / 2 - 2], pair[n][(j0 + KG) / 2 - 1], add);
    }
  }
#pragma GCC unroll 16
  for (int n = 0; n < NQ; ++n) s[n] = reduce_lanes(quad[n][0], quad[n][1], quad[n][2], quad[n][3], add);
}

// One query, any dpad: the same chains and tree.
template <class Rows>
__m512 scores_rows_any(const float* q, const Rows& keys, int dpad) {
  __m512 part[16];
  for (int j = 0; j < 16; ++j) {
    part[j] = _mm512_setzero_ps();
    for (int i = 0; i < dpad; i += 16) part[j] = _mm512_fmadd_ps(_mm512_load_ps(q + i), keys.load(j, i / 16), part[j]);
  }
  return reduce16(part);
}

template <int NQ, class Rows>
DB_INLINE void scores_rows(const float* const* q, const Rows& keys, int dpad, __m512* s) {
  switch (dpad) {
    case 16: return scores_rows<NQ, 1>(q, keys, s);
    case 32: return scores_rows<NQ, 2>(q, keys, s);
    case 64: return scores_rows<NQ, 4>(q, keys, s);
    case 128: return scores_rows<NQ, 8>(q, keys, s);
    default:
      for (int n = 0; n < NQ; ++n) s[n] = scores_rows_any(q[n], keys, dpad);
  }
}

// kt[i][j] = keys[j][i] for i < dpad, j < 16 (16 x 16 blocks: 4 shuffle stages).
void transpose_keys(const float* keys, int dpad, float* kt) {
  for (int i0 = 0; i0 < dpad; i0 += 16) {
    __m512 r[16], t[16], u[16];
    for (int j = 0; j < 16; ++j) r[j] = _mm512_load_ps(keys + j * dpad + i0);
    for (int k = 0; k < 8; ++k) {  // per 128-bit lane: [a0 b0 a1 b1], [a2 b2 a3 b3] of rows 2k, 2k+1
      t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
      t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
    }
    for (int k = 0; k < 4; ++k) {  // u[4k + e], 128-bit lane L: column 4L + e of rows 4k .. 4k+3
      u[4 * k + 0] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0x44);
      u[4 * k + 1] = _mm512_shuffle_ps(t[4 * k], t[4 * k + 2], 0xEE);
      u[4 * k + 2] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0x44);
      u[4 * k + 3] = _mm512_shuffle_ps(t[4 * k + 1], t[4 * k + 3], 0xEE);
    }
    for (int e = 0; e < 4; ++e) {  // column c = 4L + e gathers 128-bit lane L of u[e], u[4+e], u[8+e], u[12+e]
      const __m512 v0 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0x88), v1 = _mm512_shuffle_f32x4(u[e], u[4 + e], 0xDD);
      const __m512 w0 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0x88);
      const __m512 w1 = _mm512_shuffle_f32x4(u[8 + e], u[12 + e], 0xDD);
      _mm512_store_ps(kt + (i0 + e) * 16, _mm512_shuffle_f32x4(v0, w0, 0x88));
      _mm512_store_ps(kt + (i0 + 4 + e) * 16, _mm512_shuffle_f32x4(v1, w1, 0x88));
      _mm512_store_ps(kt + (i0 + 8 + e) * 16, _mm512_shuffle_f32x4(v0, w0, 0xDD));
      _mm512_store_ps(kt + (i0 + 12 + e) * 16, _mm512_shuffle_f32x4(v1, w1, 0xDD));
    }
  }
}

// Unscaled scores of NQ queries against transposed keys kt [dpad][16]; equal bit
// for bit to scores_rows() (same lane chains, same tree).
// NB: dpad / 16 when known at compile time, else 0.
template <int NQ, int NB>
DB_INLINE void scores_transposed(const float* const* q, const float* kt, int dpad, __m512* s) {
  const int dp = NB > 0 ? 16 * NB : dpad;
  __m512 low[NQ], high[NQ];  // (S0 + S1) and S2 of the tree
  for (int lane_group = 0; lane_group < 4; ++lane_group) {
    __m512 c[NQ][4];
    for (auto& row : c)
      for (auto& x : row) x = _mm512_setzero_ps();
    for (int i0 = 0; i0 < dp; i0 += 16) {
      for (int e = 0; e < 4; ++e) {
        const int i = i0 + 4 * lane_group + e;
        const __m512 k = _mm512_load_ps(kt + i * 16);
        for (int n = 0; n < NQ; ++n) c[n][e] = _mm512_fmadd_ps(_mm512_set1_ps(q[n][i]), k, c[n][e]);
      }
    }
    for (int n = 0; n < NQ; ++n) {
      const __m512 sum = _mm512_add_ps(_mm512_add_ps(c[n][0], c[n][2]), _mm512_add_ps(c[n][1], c[n][3]));
      if (lane_group == 0) low[n] = sum;
      if (lane_group == 1) low[n] = _mm512_add_ps(low[n], sum);
      if (lane_group == 2) high[n] = sum;
      if (lane_group == 3) s[n] = _mm512_add_ps(low[n], _mm512_add_ps(high[n], sum));
    }
  }
}

// Every lane = the largest lane of x.
__m512 max_all_lanes(__m512 x) {
  x = _mm512_max_ps(x, _mm512_permute_ps(x, 0xB1));
  x = _mm512_max_ps(x, _mm512_permute_ps(x, 0x4E));
  x = _mm512_max_ps(x, _mm512_shuffle_f32x4(x, x, 0xB1));
  return _mm512_max_ps(x, _mm512_shuffle_f32x4(x, x, 0x4E));
}

// How the queries of a block reach the chunk's keys.
enum class Reach {
  kAll,     // all 16 keys
  kSame,    // the same n_keys keys
  kRagged,  // query n: valid[n] keys (masked FMAs beyond)
};

// acc[n][16b ..) = acc[n] * corr[n] + sum_{j < keys(n)} p[n][j] * values[j],
// for NB 16-float blocks from block b0 of the value rows (corr null: all 1).
template <int NQ, int NB, Reach R, class Rows>
void accumulate_values(float* const* acc, const float* corr, const float* p, const Rows& values, int b0, int n_keys,
                       const int32_t* valid) {
  const int nk = R == Reach::kAll ? 16 : n_keys;
  __m512 a[NQ][NB];
  for (int n = 0; n < NQ; ++n)
    for (int b = 0; b < NB; ++b) {
      a[n][b] = _mm512_load_ps(acc[n] + 16 * b);
      if (corr) a[n][b] = _mm512_mul_ps(a[n][b], _mm512_set1_ps(corr[n]));
    }
  for (int j = 0; j < nk; ++j) {
    __m512 v[NB];
    for (int b = 0; b < NB; ++b) v[b] = values.load(j, b0 + b);
    for (int n = 0; n < NQ; ++n) {
      const __m512 w = _mm512_set1_ps(p[16 * n + j]);
      if (R == Reach::kRagged) {
        const __mmask16 k = j < valid[n] ? 0xFFFF : 0;
        for (int b = 0; b < NB; ++b) a[n][b] = _mm512_mask3_fmadd_ps(w, v[b], a[n][b], k);
      } else {
        for (int b = 0; b < NB; ++b) a[n][b] = _mm512_fmadd_ps(w, v[b], a[n][b]);
      }
    }
  }
  for (int n = 0; n < NQ; ++n)
    for (int b = 0; b < NB; ++b) _mm512_store_ps(acc[n] + 16 * b, a[n][b]);
}

// Value columns in passes of up to 4 blocks, 2 past four queries (NQ * NB sums in registers).
template <int NQ, Reach R, class Rows>
void accumulate_all(float* const* acc, const float* corr, const float* p, const Rows& values, int dpad, int n_keys,
                    const int32_t* valid) {
  constexpr int kPass = NQ <= 6 ? 4 : 2;
  float* part[NQ];
  for (int e0 = 0; e0 < dpad; e0 += 16 * kPass) {
    for (int n = 0; n < NQ; ++n) part[n] = acc[n] + e0;
    const int b0 = e0 / 16;
    switch (std::min(kPass, (dpad - e0) / 16)) {
      case 4: accumulate_values<NQ, 4, R>(part, corr, p, values, b0, n_keys, valid); break;
      case 3: accumulate_values<NQ, 3, R>(part, corr, p, values, b0, n_keys, valid); break;
      case 2: accumulate_values<NQ, 2, R>(part, corr, p, values, b0, n_keys, valid); break;
      default: accumulate_values<NQ, 1, R>(part, corr, p, values, b0, n_keys, valid); break;
    }
  }
}

// A tile's scratch, carved from AttentionTile::scratch (all 64-byte aligned).
// Query qi = (row * kv heads + kv head) * group + head in group.
struct TileScratch {
  int kpad;        // k_head_dim rounded up to 16; columns beyond k_head_dim stay 0
  int vpad;        // v_head_dim rounded up to 16; likewise
  float* keys;     // [16][kpad] the current chunk's keys of the current kv head
  float* kt;       // [kpad][16] the same, transposed (when used)
  float* values;   // [16][vpad] its values
  float* q;        // [n_q][kpad] the tile's queries
  float* acc;      // [n_q][vpad] sum of exp(score - m) * value
  float* lsum;     // [n_q][16] per-lane sums of exp(score - m)
  float* m;        // [n_q] reference maximum (see fold_block)
  float* p;        // [kBlockQRows][16] one block's exp(score - m)
  int32_t* qlist;  // [n_q] queries reaching the current chunk
  int32_t* vlist;  // [n_q] how many of its keys each reaches
};

// Folds the current chunk (its keys and values read from Rows, or the keys
// from ts.kt when transposed; Rows of different types when the values are read
// from the keys) into NQ queries qi[] that reach valid[] of its keys.
template <int NQ, class Rows, class VRows>
DB_INLINE void fold_block(const TileScratch& ts, const int32_t* qi, const int32_t* valid, bool transposed,
                          float scale, const Rows& keys, const VRows& values) {
  const int kpad = ts.kpad, vpad = ts.vpad;
  const float* q[NQ];
  for (int n = 0; n < NQ; ++n) q[n] = ts.q + static_cast<int64_t>(qi[n]) * kpad;
  __m512 s[NQ];
  if constexpr (NQ <= kBlockQ) {
    if (transposed && kpad == 64)
      scores_transposed<NQ, 4>(q, ts.kt, kpad, s);
    else if (transposed && kpad == 128)
      scores_transposed<NQ, 8>(q, ts.kt, kpad, s);
    else if (transposed)
      scores_transposed<NQ, 0>(q, ts.kt, kpad, s);
    else
      scores_rows<NQ>(q, keys, kpad, s);
  } else {
    scores_rows<NQ>(q, keys, kpad, s);
  }

  // Query n's reference maximum m moves only when one of its scores exceeds it
  // by more than kRescaleSlack (always on its first chunk, where m = -inf);
  // exp(score - m) is then at most e^kRescaleSlack.
  __mmask16 live[NQ], moved[NQ];
  int n_keys = 0;
  bool ragged = false, any_moved = false;
  for (int n = 0; n < NQ; ++n) {
    live[n] = first_lanes(valid[n]);
    s[n] = _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), live[n], _mm512_mul_ps(s[n], _mm512_set1_ps(scale)));
    moved[n] = _mm512_mask_cmp_ps_mask(live[n], s[n], _mm512_set1_ps(ts.m[qi[n]] + kRescaleSlack), _CMP_GT_OQ);
    any_moved |= moved[n] != 0;
    ragged |= n > 0 && valid[n] != valid[0];
    n_keys = std::max(n_keys, valid[n]);
  }
  // corr[n] = exp(m_old - m_new): exactly 1 for a query whose m stays.
  alignas(64) float corr[16];
  if (any_moved) {
    alignas(64) float diff[16] = {};
    for (int n = 0; n < NQ; ++n) {
      if (!moved[n]) continue;
      const float m_old = ts.m[qi[n]];
      ts.m[qi[n]] = _mm512_cvtss_f32(_mm512_max_ps(max_all_lanes(s[n]), _mm512_set1_ps(m_old)));
      diff[n] = m_old - ts.m[qi[n]];
    }
    _mm512_store_ps(corr, exp512(_mm512_load_ps(diff)));
  }
  float* acc[NQ];
  for (int n = 0; n < NQ; ++n) {
    const __m512 p = _mm512_maskz_mov_ps(live[n], exp512(_mm512_sub_ps(s[n], _mm512_set1_ps(ts.m[qi[n]]))));
    _mm512_store_ps(ts.p + 16 * n, p);
    float* l = ts.lsum + static_cast<int64_t>(qi[n]) * 16;
    const __m512 l_old = _mm512_load_ps(l);
    _mm512_store_ps(l, any_moved ? _mm512_fmadd_ps(l_old, _mm512_set1_ps(corr[n]), p) : _mm512_add_ps(l_old, p));
    acc[n] = ts.acc + static_cast<int64_t>(qi[n]) * vpad;
  }
  const float* c = any_moved ? corr : nullptr;
  if (ragged)
    accumulate_all<NQ, Reach::kRagged>(acc, c, ts.p, values, vpad, n_keys, valid);
  else if (n_keys == 16)
    accumulate_all<NQ, Reach::kAll>(acc, c, ts.p, values, vpad, n_keys, valid);
  else
    accumulate_all<NQ, Reach::kSame>(acc, c, ts.p, values, vpad, n_keys, valid);
}

// Folds the current chunk into the n queries qi[] reaching valid[] of its keys,
// kBlockQ at a time on transposed keys, else up to kBlockQRows.
template <class Rows, class VRows>
void fold(const TileScratch& ts, const int32_t* qi, const int32_t* valid, int n, bool transposed, float scale,
          const Rows& keys, const VRows& values) {
  const int block = transposed ? kBlockQ : kBlockQRows;
  for (int i = 0; i < n; i += block) {
    const int32_t* q = qi + i;
    const int32_t* v = valid + i;
    switch (std::min(block, n - i)) {
      case 8: fold_block<8>(ts, q, v, transposed, scale, keys, values); break;
      case 7: fold_block<7>(ts, q, v, transposed, scale, keys, values); break;
      case 6: fold_block<6>(ts, q, v, transposed, scale, keys, values); break;
      case 5: fold_block<5>(ts, q, v, transposed, scale, keys, values); break;
      case 4: fold_block<4>(ts, q, v, transposed, scale, keys, values); break;
      case 3: fold_block<3>(ts, q, v, transposed, scale, keys, values); break;
      case 2: fold_block<2>(ts, q, v, transposed, scale, keys, values); break;
      default: fold_block<1>(ts, q, v, transposed, scale, keys, values); break;
    }
  }
}

// Sets up the tile's scratch: zeroed buffers, padded queries, m = -inf.
TileScratch init_scratch(const AttentionTile& t, int n_heads_item, int group) {
  const AttentionQueries& qs = *t.qs;
  const AttentionWorkspace::Item& it = t.item;
  const int dk = t.kv->k_head_dim, kpad = (dk + 15) / 16 * 16, vpad = (t.kv->v_head_dim + 15) / 16 * 16;
  const int64_t n_q = int64_t{it.row_end - it.row_begin} * n_heads_item * group;
  TileScratch ts{};
  ts.kpad = kpad, ts.vpad = vpad, ts.keys = t.scratch;
  ts.kt = ts.keys + int64_t{kKeysPerChunk} * kpad;
  ts.values = ts.kt + int64_t{kKeysPerChunk} * kpad;
  ts.q = ts.values + int64_t{kKeysPerChunk} * vpad;
  ts.acc = ts.q + n_q * kpad;
  ts.lsum = ts.acc + n_q * vpad;
  ts.m = ts.lsum + n_q * 16;
  ts.p = ts.m + (n_q + 15) / 16 * 16;
  ts.qlist = t.index;
  ts.vlist = t.index + n_q;
  std::fill(ts.keys, ts.p, 0.0f);
  std::fill(ts.m, ts.m + n_q, -std::numeric_limits<float>::infinity());
  for (int32_t row = it.row_begin; row < it.row_end; ++row)
    for (int h = 0; h < n_heads_item * group; ++h) {
      const float* src = qs.q + (static_cast<int64_t>(row) * qs.n_heads + it.kv_begin * group + h) * dk;
      std::copy(src, src + dk, ts.q + (int64_t{row - it.row_begin} * n_heads_item * group + h) * kpad);
    }
  return ts;
}

// k_rows[r] / v_rows[r] = the first byte of kv head `head` of cache row
// slots[r] (F16 or Q8_0, in place) for r < n_rows; the rows past n_rows repeat
// row 0, whose scores the kernels mask and whose values they weigh by 0 or skip.
void cache_rows(const PagedKVLayer& kv, const int64_t* slots, int n_rows, int head, const uint8_t** k_rows,
                const uint8_t** v_rows) {
  const KvHeadBytes k_at(kv.dtype, kv.k_row_stride, head, kv.k_head_dim);
  const KvHeadBytes v_at(kv.dtype, kv.v_row_stride, head, kv.v_head_dim);
  for (int r = 0; r < kKeysPerChunk; ++r) {
    const int64_t slot = slots[r < n_rows ? r : 0];
    k_rows[r] = static_cast<const uint8_t*>(kv.k) + k_at.at(slot);
    v_rows[r] = static_cast<const uint8_t*>(kv.v) + v_at.at(slot);
  }
}

// Whether a chunk with few queries per key reads its rows in place: F16 heads
// of whole 16-value vectors, Q8_0 heads of whole 32-element blocks.
bool reads_in_place(const PagedKVLayer& kv) {
  const int width = kv.dtype == DType::F16 ? 16 : kv.dtype == DType::Q8_0 ? 32 : 0;
  return width > 0 && kv.k_head_dim % width == 0 && kv.v_head_dim % width == 0;
}

void tile(const AttentionOps&, const AttentionTile& t) {
  const AttentionQueries& qs = *t.qs;
  const PagedKVLayer& kv = *t.kv;
  const AttentionWorkspace::Item& it = t.item;
  const int dk = kv.k_head_dim, d = kv.v_head_dim, group = qs.n_heads / kv.n_kv_heads;
  const int n_heads_item = it.kv_end - it.kv_begin;
  const TileScratch ts = init_scratch(t, n_heads_item, group);
  const int kpad = ts.kpad, vpad = ts.vpad;
  // The latent layout (V a prefix of K) with whole 16-value blocks: the values
  // are read from the converted keys, converted once.
  const bool values_in_keys = kv.values_in_keys() && d == vpad;
  const int32_t max_pos = it.span_end - 1;  // the last position of the span the rows reach

  const std::vector<int32_t>& table = qs.block_tables[it.seq];
  int64_t slots[kKeysPerChunk];
  for (int32_t first = it.span_begin; first <= max_pos; first += kKeysPerChunk) {
    const int n_keys = std::min(kKeysPerChunk, max_pos + 1 - first);
    if (first + kKeysPerChunk <= max_pos)  // the next chunk
      prefetch_kv_chunk(qs, kv, table, it.kv_begin, n_heads_item, first + kKeysPerChunk,
                     std::min(kKeysPerChunk, max_pos + 1 - first - kKeysPerChunk));
    chunk_slots(table, qs.block_size, first, n_keys, slots);
    int active = 0;  // queries of one kv head reaching this chunk
    for (int32_t row = it.row_begin; row < it.row_end; ++row) active += qs.positions[row] >= first ? group : 0;
    const bool transposed = active >= kTransposeMinQueries;
    // Few queries per key (decode): the rows are read in place, with no f32 copy.
    const bool in_place = !transposed && reads_in_place(kv);
    for (int h = 0; h < n_heads_item; ++h) {
      const uint8_t* k_rows[kKeysPerChunk];
      const uint8_t* v_rows[kKeysPerChunk];
      if (in_place) {
        cache_rows(kv, slots, n_keys, it.kv_begin + h, k_rows, v_rows);
      } else {
        load_rows(kv.k, kv.dtype, slots, n_keys, kv.k_row_stride, it.kv_begin + h, dk, kpad, ts.keys);
        if (!values_in_keys)
          load_rows(kv.v, kv.dtype, slots, n_keys, kv.v_row_stride, it.kv_begin + h, d, vpad, ts.values);
      }
      if (transposed) transpose_keys(ts.keys, kpad, ts.kt);
      int n = 0;
      for (int32_t row = it.row_begin; row < it.row_end; ++row) {
        const int v = std::min(kKeysPerChunk, qs.positions[row] + 1 - first);
        for (int g = 0; v > 0 && g < group; ++g, ++n) {
          ts.qlist[n] = ((row - it.row_begin) * n_heads_item + h) * group + g;
          ts.vlist[n] = v;
        }
      }
      if (in_place && kv.dtype == DType::Q8_0)
        fold(ts, ts.qlist, ts.vlist, n, false, qs.scale, Q8Rows{k_rows}, Q8Rows{v_rows});
      else if (in_place)
        fold(ts, ts.qlist, ts.vlist, n, false, qs.scale, HalfRows{k_rows}, HalfRows{v_rows});
      else
        fold(ts, ts.qlist, ts.vlist, n, transposed, qs.scale, ScratchRows{ts.keys, kpad},
             values_in_keys ? ScratchRows{ts.keys, kpad} : ScratchRows{ts.values, vpad});
    }
  }

  const int n_q = (it.row_end - it.row_begin) * n_heads_item * group;
  for (int i = 0; i < n_q; ++i) {  // the span records (attention_spans.h)
    float* r = t.records + i * span_record_floats(d);
    r[0] = ts.m[i];
    r[1] = _mm512_reduce_add_ps(_mm512_load_ps(ts.lsum + i * 16));
    const float* a = ts.acc + static_cast<int64_t>(i) * vpad;
    std::copy(a, a + d, r + 2);
  }
}

// F16 rows 16 values per conversion (vcvtps2ph rounds to nearest even, as
// f32_to_fp16 does); other dtypes as at the portable level.
void store_row(const float* src, int64_t n, DType dtype, uint8_t* dst) {
  if (dtype != DType::F16) return store_row_scalar(src, n, dtype, dst);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 live = first_lanes(static_cast<int>(std::min<int64_t>(16, n - i)));
    const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(live, src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_mask_storeu_epi16(dst + 2 * i, live, h);
  }
}

#undef DB_INLINE

}  // namespace

const AttentionOps& attention_ops_avx512() {
  static const AttentionOps ops{nullptr, nullptr, nullptr, nullptr, &tile, &store_row};
  return ops;
}

}  // namespace db::kernels
#endif

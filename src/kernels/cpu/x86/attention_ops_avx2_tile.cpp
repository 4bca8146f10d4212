// AVX2 + FMA + F16C paged-attention tile kernel: the AVX2 level's `tile`
// (and its store_row, at the end).
//
// The plan of the AVX-512 kernel (attention_ops_avx512.cpp) on 8-float
// registers. Per chunk of 16 keys and per kv head, the tile converts the keys
// and values to f32 once; then every query of the tile that reaches the chunk
// (rows x group heads) is folded in, up to four at a time so that they share
// key and value loads. Where no more than four queries reach the chunk (a
// decode step), they read the F16 cache rows in place instead, converting
// each piece as they use it (read_f16_in_place): the same floats. A query's 16 scores are two registers (keys 0-7 and
// 8-15); its softmax state is a reference maximum m and per-lane sums of
// exp(score - m), so the only horizontal work per chunk is a compare, and a
// max when m moves. Exponentials are exp256_from_minus_87 (exp_avx2.h), 8 lanes
// at a time: a weight under e^-87 counts as e^-87, next to the weight 1 of the
// score that set m.
//
// Scores have one layout at every batch size: each query multiplies the key
// rows, two keys at a time, and the 8-lane partial vectors are reduced by a
// transpose-and-add tree. Per key that computes lane chains c[l] = sum over
// i = l (mod 8) of q[i] * k[i] (FMAs in increasing i, from 0), then
// ((c0+c2)+(c1+c3)) + ((c4+c6)+(c5+c7)). (Keys are not transposed for many
// queries as at AVX-512: with 16 registers, a transposed layout giving these
// same bits needs more loads per FMA than the rows layout, and a different
// tree would make prefill and decode results differ.) Nothing a query computes
// depends on the queries it shares a block or a chunk with.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/attention_ops.h"
#include "kernels/cpu/attention_spans.h"
#include "kernels/cpu/x86/attention_rows_avx2.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/exp_avx2.h"

namespace db::kernels {

namespace {

constexpr int kBlockQ = 4;             // queries folded into a chunk together
constexpr float kRescaleSlack = 8.0f;  // how far a score may exceed its query's reference maximum

#define DB_INLINE [[gnu::always_inline]] inline

// The tree of the file comment, in three steps. pair(a, b), per 128-bit half:
// [a0+a2, b0+b2, a1+a3, b1+b3] (lane indices within the half).
DB_INLINE __m256 pair_sum(__m256 a, __m256 b) {
  return _mm256_add_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b));
}
// quad(pair(a, b), pair(c, d)), per half: the half-sums of a, b, c, d.
DB_INLINE __m256 quad_sum(__m256 ab, __m256 cd) {
  const __m256d x = _mm256_castps_pd(ab), y = _mm256_castps_pd(cd);
  return _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(x, y)), _mm256_castpd_ps(_mm256_unpackhi_pd(x, y)));
}
// Lane j < 4: low half + high half of lane j of u0; lane 4 + j: the same of u1.
DB_INLINE __m256 halves_sum(__m256 u0, __m256 u1) {
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// Unscaled scores of NQ queries against the chunk's 16 key rows: s[n][h]
// holds keys 8h .. 8h+7 of query n. Key pairs from n_keys on are skipped
// (their lanes are 0); the odd key of the pair n_keys falls in is read whatever
// it holds, its lane masked by the caller. NB: dpad / 8 when known at compile
// time, else 0.
template <int NQ, int NB, bool F16>
DB_INLINE void scores_rows(const float* const* q, const ChunkRows<F16>& keys, int dpad, int n_keys, __m256 (*s)[2]) {
  const int nb = NB > 0 ? NB : dpad / 8;
  __m256 t[NQ][8];  // pair_sum of keys 2p, 2p+1
  for (int p = 0; p < 8; ++p) {
    if (2 * p >= n_keys) {
      for (int n = 0; n < NQ; ++n) t[n][p] = _mm256_setzero_ps();
      continue;
    }
    __m256 c[NQ][2];
    for (int n = 0; n < NQ; ++n) c[n][0] = c[n][1] = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      const __m256 ka = keys.load8(2 * p, b), kb = keys.load8(2 * p + 1, b);
      for (int n = 0; n < NQ; ++n) {
        __m256 qv = _mm256_load_ps(q[n] + 8 * b);
        asm("" : "+x"(qv));  // one load serves both keys (GCC folds it into each FMA otherwise)
        c[n][0] = _mm256_fmadd_ps(qv, ka, c[n][0]);
        c[n][1] = _mm256_fmadd_ps(qv, kb, c[n][1]);
      }
    }
    for (int n = 0; n < NQ; ++n) t[n][p] = pair_sum(c[n][0], c[n][1]);
  }
  for (int n = 0; n < NQ; ++n) {
    s[n][0] = halves_sum(quad_sum(t[n][0], t[n][1]), quad_sum(t[n][2], t[n][3]));
    s[n][1] = halves_sum(quad_sum(t[n][4], t[n][5]), quad_sum(t[n][6], t[n][7]));
  }
}

// How the queries of a block reach the chunk's keys.
enum class Reach {
  kAll,     // all 16 keys
  kSame,    // the same n_keys keys
  kRagged,  // query n: valid[n] keys (blended FMAs beyond)
};

// acc[n][8b ..) = acc[n] * corr[n] + sum_{j < keys(n)} p[n][j] * values[j],
// for NB 8-float blocks (corr null: all 1), keys in increasing j.
template <int NQ, int NB, Reach R, bool F16>
DB_INLINE void accumulate_values(float* const* acc, const float* corr, const float* p, const ChunkRows<F16>& values,
                                 int n_keys, const int32_t* valid) {
  const int nk = R == Reach::kAll ? 16 : n_keys;
  __m256 a[NQ][NB];
  for (int n = 0; n < NQ; ++n)
    for (int b = 0; b < NB; ++b) {
      a[n][b] = _mm256_load_ps(acc[n] + 8 * b);
      if (corr) a[n][b] = _mm256_mul_ps(a[n][b], _mm256_set1_ps(corr[n]));
    }
  for (int j = 0; j < nk; ++j) {
    __m256 v[NB];
    for (int b = 0; b < NB; ++b) v[b] = values.load8(j, b);
    for (int n = 0; n < NQ; ++n) {
      const __m256 w = _mm256_broadcast_ss(p + 16 * n + j);
      if (R == Reach::kRagged) {
        const __m256 keep = first_lanes(valid[n] > j ? 8 : 0);
        for (int b = 0; b < NB; ++b) a[n][b] = _mm256_blendv_ps(a[n][b], _mm256_fmadd_ps(w, v[b], a[n][b]), keep);
      } else {
        for (int b = 0; b < NB; ++b) a[n][b] = _mm256_fmadd_ps(w, v[b], a[n][b]);
      }
    }
  }
  for (int n = 0; n < NQ; ++n)
    for (int b = 0; b < NB; ++b) _mm256_store_ps(acc[n] + 8 * b, a[n][b]);
}

// accumulate_values over all dpad / 8 blocks, at most NB at a time.
template <int NQ, int NB, Reach R, bool F16>
void accumulate_all(float* const* acc, const float* corr, const float* p, const ChunkRows<F16>& values, int dpad,
                    int n_keys, const int32_t* valid) {
  float* part[NQ];
  for (int b0 = 0; b0 < dpad; b0 += 8 * NB) {
    for (int n = 0; n < NQ; ++n) part[n] = acc[n] + b0;
    const ChunkRows<F16> v = values.from(b0);
    switch (std::min(NB, (dpad - b0) / 8)) {
      case 4: accumulate_values<NQ, NB >= 4 ? 4 : 1, R>(part, corr, p, v, n_keys, valid); break;
      case 3: accumulate_values<NQ, NB >= 3 ? 3 : 1, R>(part, corr, p, v, n_keys, valid); break;
      case 2: accumulate_values<NQ, 2, R>(part, corr, p, v, n_keys, valid); break;
      default: accumulate_values<NQ, 1, R>(part, corr, p, v, n_keys, valid); break;
    }
  }
}

// A tile's scratch, carved from AttentionTile::scratch (all 32-byte aligned).
// Query qi = (row * kv heads + kv head) * group + head in group.
struct TileScratch {
  int kpad;        // k_head_dim rounded up to 8; columns beyond k_head_dim stay 0
  int vpad;        // v_head_dim rounded up to 8; likewise
  float* keys;     // [16][kpad] the current chunk's keys of the current kv head
  float* values;   // [16][vpad] its values
  float* q;        // [n_q][kpad] the tile's queries
  float* acc;      // [n_q][vpad] sum of exp(score - m) * value
  float* lsum;     // [n_q][16] per-lane sums of exp(score - m)
  float* m;        // [n_q] reference maximum (see fold_block)
  float* p;        // [kBlockQ][16] one block's exp(score - m)
  int32_t* qlist;  // [n_q] queries reaching the current chunk
  int32_t* vlist;  // [n_q] how many of its keys each reaches
};

// Folds the current chunk (keys, values) into NQ queries qi[] that reach valid[] of its keys.
template <int NQ, bool F16>
DB_INLINE void fold_block(const TileScratch& ts, const ChunkRows<F16>& keys, const ChunkRows<F16>& values,
                          const int32_t* qi, const int32_t* valid, float scale) {
  const int kpad = ts.kpad, vpad = ts.vpad;
  const float* q[NQ];
  int n_keys = 0;
  bool ragged = false;
  for (int n = 0; n < NQ; ++n) {
    q[n] = ts.q + static_cast<int64_t>(qi[n]) * kpad;
    ragged |= n > 0 && valid[n] != valid[0];
    n_keys = std::max(n_keys, valid[n]);
  }
  __m256 s[NQ][2];
  if (kpad == 64)
    scores_rows<NQ, 8>(q, keys, kpad, n_keys, s);
  else if (kpad == 128)
    scores_rows<NQ, 16>(q, keys, kpad, n_keys, s);
  else
    scores_rows<NQ, 0>(q, keys, kpad, n_keys, s);

  // Query n's reference maximum m moves only when one of its scores exceeds it
  // by more than kRescaleSlack (always on its first chunk, where m = -inf);
  // exp(score - m) is then at most e^kRescaleSlack.
  const __m256 minus_inf = _mm256_set1_ps(-INFINITY), scale_v = _mm256_set1_ps(scale);
  __m256 live[NQ][2];
  bool moved[NQ], any_moved = false;
  for (int n = 0; n < NQ; ++n) {
    const __m256 bar = _mm256_set1_ps(ts.m[qi[n]] + kRescaleSlack);
    int above = 0;
    for (int h = 0; h < 2; ++h) {
      live[n][h] = first_lanes(valid[n] - 8 * h);
      s[n][h] = _mm256_blendv_ps(minus_inf, _mm256_mul_ps(s[n][h], scale_v), live[n][h]);
      above |= _mm256_movemask_ps(_mm256_cmp_ps(s[n][h], bar, _CMP_GT_OQ));
    }
    moved[n] = above != 0;
    any_moved |= moved[n];
  }
  // corr[n] = exp(m_old - m_new): exactly 1 for a query whose m stays.
  alignas(32) float corr[8];
  if (any_moved) {
    alignas(32) float diff[8] = {};
    for (int n = 0; n < NQ; ++n) {
      if (!moved[n]) continue;
      const float m_old = ts.m[qi[n]];
      ts.m[qi[n]] = std::max(hmax_ps(_mm256_max_ps(s[n][0], s[n][1])), m_old);
      diff[n] = m_old - ts.m[qi[n]];
    }
    _mm256_store_ps(corr, exp256_from_minus_87(_mm256_load_ps(diff)));
  }
  float* acc[NQ];
  for (int n = 0; n < NQ; ++n) {
    const __m256 m = _mm256_set1_ps(ts.m[qi[n]]);
    float* l = ts.lsum + static_cast<int64_t>(qi[n]) * 16;
    for (int h = 0; h < 2; ++h) {
      const __m256 p = _mm256_and_ps(live[n][h], exp256_from_minus_87(_mm256_sub_ps(s[n][h], m)));
      _mm256_store_ps(ts.p + 16 * n + 8 * h, p);
      const __m256 l_old = _mm256_load_ps(l + 8 * h);
      _mm256_store_ps(l + 8 * h,
                      any_moved ? _mm256_fmadd_ps(l_old, _mm256_set1_ps(corr[n]), p) : _mm256_add_ps(l_old, p));
    }
    acc[n] = ts.acc + static_cast<int64_t>(qi[n]) * vpad;
  }
  const float* c = any_moved ? corr : nullptr;
  constexpr int NB = NQ >= 3 ? 3 : 4;  // 8-float value blocks per pass: NQ * NB accumulators
  if (ragged)
    accumulate_all<NQ, NB, Reach::kRagged>(acc, c, ts.p, values, vpad, n_keys, valid);
  else if (n_keys == 16)
    accumulate_all<NQ, NB, Reach::kAll>(acc, c, ts.p, values, vpad, n_keys, valid);
  else
    accumulate_all<NQ, NB, Reach::kSame>(acc, c, ts.p, values, vpad, n_keys, valid);
}

// Folds the current chunk into the n queries qi[] reaching valid[] of its keys, four at a time.
template <bool F16>
void fold(const TileScratch& ts, const ChunkRows<F16>& keys, const ChunkRows<F16>& values, const int32_t* qi,
          const int32_t* valid, int n, float scale) {
  int i = 0;
  for (; i + kBlockQ <= n; i += kBlockQ) fold_block<kBlockQ>(ts, keys, values, qi + i, valid + i, scale);
  switch (n - i) {
    case 3: fold_block<3>(ts, keys, values, qi + i, valid + i, scale); break;
    case 2: fold_block<2>(ts, keys, values, qi + i, valid + i, scale); break;
    case 1: fold_block<1>(ts, keys, values, qi + i, valid + i, scale); break;
    default: break;
  }
}

// Whether the chunk is read straight from an F16 cache: when at most one block
// of queries reaches it (decode), converting its rows first costs more than
// converting each piece where it is used. Needs whole 8-value pieces and the
// chunk's 16 slots consecutive (within one block).
bool read_f16_in_place(const PagedKVLayer& kv, int n_queries, const int64_t* slots, int n_keys, int block_size) {
  return kv.dtype == DType::F16 && kv.k_head_dim % 8 == 0 && kv.v_head_dim % 8 == 0 && n_queries <= kBlockQ &&
         block_size % kKeysPerChunk == 0 && slots[n_keys - 1] == slots[0] + n_keys - 1;
}

// Sets up the tile's scratch: zeroed buffers, padded queries, m = -inf. The
// layout fits tile_scratch_floats() (which pads the widths to 16, not 8).
TileScratch init_scratch(const AttentionTile& t, int n_heads_item, int group) {
  const AttentionQueries& qs = *t.qs;
  const AttentionWorkspace::Item& it = t.item;
  const int dk = t.kv->k_head_dim, kpad = (dk + 7) / 8 * 8, vpad = (t.kv->v_head_dim + 7) / 8 * 8;
  const int64_t n_q = int64_t{it.row_end - it.row_begin} * n_heads_item * group;
  TileScratch ts{};
  ts.kpad = kpad, ts.vpad = vpad, ts.keys = t.scratch;
  ts.values = ts.keys + int64_t{kKeysPerChunk} * kpad;
  ts.q = ts.values + int64_t{kKeysPerChunk} * vpad;
  ts.acc = ts.q + n_q * kpad;
  ts.lsum = ts.acc + n_q * vpad;
  ts.m = ts.lsum + n_q * 16;
  ts.p = ts.m + (n_q + 7) / 8 * 8;
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

#undef DB_INLINE

}  // namespace

void attention_tile_avx2(const AttentionOps&, const AttentionTile& t) {
  const AttentionQueries& qs = *t.qs;
  const PagedKVLayer& kv = *t.kv;
  const AttentionWorkspace::Item& it = t.item;
  const int dk = kv.k_head_dim, d = kv.v_head_dim, group = qs.n_heads / kv.n_kv_heads;
  const int n_heads_item = it.kv_end - it.kv_begin;
  const TileScratch ts = init_scratch(t, n_heads_item, group);
  const int kpad = ts.kpad, vpad = ts.vpad;
  // The latent layout (V a prefix of K) with whole 8-value pieces: the values
  // are read from the converted keys, converted once.
  const bool values_in_keys = kv.values_in_keys() && d % 8 == 0;
  const int32_t max_pos = it.span_end - 1;  // the last position of the span the rows reach

  const std::vector<int32_t>& table = qs.block_tables[it.seq];
  int64_t slots[kKeysPerChunk];
  for (int32_t first = it.span_begin; first <= max_pos; first += kKeysPerChunk) {
    const int n_keys = std::min(kKeysPerChunk, max_pos + 1 - first);
    if (first + kKeysPerChunk <= max_pos)  // the next chunk
      prefetch_kv_chunk(qs, kv, table, it.kv_begin, n_heads_item, first + kKeysPerChunk,
                     std::min(kKeysPerChunk, max_pos + 1 - first - kKeysPerChunk));
    chunk_slots(table, qs.block_size, first, n_keys, slots);
    for (int h = 0; h < n_heads_item; ++h) {
      int n = 0;
      for (int32_t row = it.row_begin; row < it.row_end; ++row) {
        const int v = std::min(kKeysPerChunk, qs.positions[row] + 1 - first);
        for (int g = 0; v > 0 && g < group; ++g, ++n) {
          ts.qlist[n] = ((row - it.row_begin) * n_heads_item + h) * group + g;
          ts.vlist[n] = v;
        }
      }
      const int head = it.kv_begin + h;
      if (read_f16_in_place(kv, n, slots, n_keys, qs.block_size)) {
        const ChunkRows<true> keys{
            static_cast<const uint16_t*>(kv.k) + kv_cache_offset(slots[0], kv.k_row_stride, head, dk),
            kv.k_row_stride};
        const ChunkRows<true> values{
            static_cast<const uint16_t*>(kv.v) + kv_cache_offset(slots[0], kv.v_row_stride, head, d),
            kv.v_row_stride};
        fold(ts, keys, values, ts.qlist, ts.vlist, n, qs.scale);
        continue;
      }
      load_rows(kv.k, kv.dtype, slots, n_keys, kv.k_row_stride, head, dk, kpad, ts.keys);
      if (values_in_keys) {
        fold(ts, ChunkRows<false>{ts.keys, kpad}, ChunkRows<false>{ts.keys, kpad}, ts.qlist, ts.vlist, n, qs.scale);
        continue;
      }
      load_rows(kv.v, kv.dtype, slots, n_keys, kv.v_row_stride, head, d, vpad, ts.values);
      fold(ts, ChunkRows<false>{ts.keys, kpad}, ChunkRows<false>{ts.values, vpad}, ts.qlist, ts.vlist, n, qs.scale);
    }
  }

  const int n_q = (it.row_end - it.row_begin) * n_heads_item * group;
  for (int i = 0; i < n_q; ++i) {  // the span records (attention_spans.h)
    const float* l = ts.lsum + static_cast<int64_t>(i) * 16;
    float* r = t.records + i * span_record_floats(d);
    r[0] = ts.m[i];
    r[1] = hsum_ps(_mm256_add_ps(_mm256_load_ps(l), _mm256_load_ps(l + 8)));
    const float* a = ts.acc + static_cast<int64_t>(i) * vpad;
    std::copy(a, a + d, r + 2);
  }
}

void store_row_avx2(const float* src, int64_t n, DType dtype, uint8_t* dst) {
  if (dtype != DType::F16) return store_row_scalar(src, n, dtype, dst);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)  // vcvtps2ph rounds to nearest even, as f32_to_fp16 does
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  store_row_scalar(src + i, n - i, dtype, dst + 2 * i);
}

}  // namespace db::kernels
#endif

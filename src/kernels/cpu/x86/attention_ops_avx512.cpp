// AVX-512 (F/BW/VL) versions of the attention inner loops. Scores of up to 16
// keys come out of one register: each key's products are summed lane-wise and
// the 16 partial vectors are reduced together by a transpose-and-add tree, so
// no per-key horizontal sum is needed. Softmax exponentials are vectorized.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/attention_ops.h"
#include "kernels/cpu/x86/exp_avx512.h"

namespace db::kernels {

namespace {

// Lanes [0, n) set (n <= 16).
__mmask16 first_lanes(int n) { return static_cast<__mmask16>((1u << n) - 1u); }

void convert_row(const uint8_t* src, DType dtype, int d, float* out) {
  for (int i = 0; i < d; i += 16) {
    const __mmask16 m = first_lanes(std::min(16, d - i));
    const __m256i h = _mm256_maskz_loadu_epi16(m, src + 2 * i);
    const __m512 f = dtype == DType::F16
                         ? _mm512_cvtph_ps(h)
                         : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    _mm512_mask_storeu_ps(out + i, m, f);
  }
}

void load_rows(const void* base, DType dtype, int64_t slot0, int n_rows, int n_kv_heads, int head, int d,
               float* dst) {
  const size_t elem = block_bytes(dtype);
  const auto* bytes = static_cast<const uint8_t*>(base);
  for (int r = 0; r < n_rows; ++r) {
    const uint8_t* src = bytes + ((slot0 + r) * n_kv_heads + head) * static_cast<int64_t>(d) * elem;
    float* out = dst + static_cast<int64_t>(r) * d;
    if (dtype == DType::F32)
      std::memcpy(out, src, static_cast<size_t>(d) * sizeof(float));
    else
      convert_row(src, dtype, d, out);
  }
}

// v[j] (j < 16) -> one register whose lane j is the sum of v[j]'s lanes.
__m512 reduce16(__m512 (&v)[16]) {
  __m512 t[8];
  for (int i = 0; i < 8; ++i)  // 128-bit lane: [a0+a2, b0+b2, a1+a3, b1+b3] of keys 2i, 2i+1
    t[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  __m512 u[4];
  for (int i = 0; i < 4; ++i) {  // 128-bit lane: partial sums of keys 4i .. 4i+3
    const __m512d a = _mm512_castps_pd(t[2 * i]), b = _mm512_castps_pd(t[2 * i + 1]);
    u[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)), _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  // Sum the four 128-bit lanes of u[i] into 128-bit lane i.
  const __m512 w01 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x88), _mm512_shuffle_f32x4(u[0], u[1], 0xDD));
  const __m512 w23 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x88), _mm512_shuffle_f32x4(u[2], u[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(w01, w23, 0x88), _mm512_shuffle_f32x4(w01, w23, 0xDD));
}

void scores(const float* q, const float* keys, int n_keys, int d, float scale, float* out) {
  for (int j0 = 0; j0 < n_keys; j0 += 16) {
    const int nk = std::min(16, n_keys - j0);
    __m512 part[16];
    for (int j = 0; j < 16; ++j) part[j] = _mm512_setzero_ps();
    for (int i = 0; i < d; i += 16) {
      const __mmask16 m = first_lanes(std::min(16, d - i));
      const __m512 qv = _mm512_maskz_loadu_ps(m, q + i);
      for (int j = 0; j < nk; ++j)
        part[j] = _mm512_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, keys + static_cast<int64_t>(j0 + j) * d + i), part[j]);
    }
    _mm512_mask_storeu_ps(out + j0, first_lanes(nk), _mm512_mul_ps(reduce16(part), _mm512_set1_ps(scale)));
  }
}

void accumulate(float* acc, float correction, const float* weights, const float* values, int n_keys, int d) {
  const __m512 corr = _mm512_set1_ps(correction);
  for (int i = 0; i < d; i += 16) {
    const __mmask16 m = first_lanes(std::min(16, d - i));
    __m512 a = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, acc + i), corr);
    for (int j = 0; j < n_keys; ++j) {
      const __m512 v = _mm512_maskz_loadu_ps(m, values + static_cast<int64_t>(j) * d + i);
      a = _mm512_fmadd_ps(_mm512_set1_ps(weights[j]), v, a);
    }
    _mm512_mask_storeu_ps(acc + i, m, a);
  }
}

// online_softmax_update() (kernels/cpu/softmax.h) with vector exponentials.
float softmax_update(OnlineSoftmax& state, float* scores, int64_t n) {
  __m512 vmax = _mm512_set1_ps(-INFINITY);
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = first_lanes(static_cast<int>(std::min<int64_t>(16, n - j)));
    vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), m, scores + j));
  }
  const float m_new = std::max(state.m, _mm512_reduce_max_ps(vmax));
  const float correction = std::exp(state.m - m_new);  // 0 when state.m is -inf
  const __m512 mv = _mm512_set1_ps(m_new);
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 m = first_lanes(static_cast<int>(std::min<int64_t>(16, n - j)));
    const __m512 e = exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, scores + j), mv));
    _mm512_mask_storeu_ps(scores + j, m, e);
    sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(m, e));
  }
  state.l = state.l * correction + _mm512_reduce_add_ps(sum);
  state.m = m_new;
  return correction;
}

}  // namespace

const AttentionOps& attention_ops_avx512() {
  static const AttentionOps ops{&load_rows, &scores, &accumulate, &softmax_update};
  return ops;
}

}  // namespace db::kernels
#endif

// The AVX2 attention tile's key and value rows (attention_ops_avx2_tile.cpp):
// cache rows converted to f32 scratch (F16, BF16 and Q8_0 rows), or read in
// place from an F16 cache.
// Included only by files built for AVX2 + F16C; everything here has internal
// linkage (see src/kernels/CMakeLists.txt).
#pragma once
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/attention_load_rows.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "tensor/dtype.h"

namespace db::kernels {
namespace {

// Lanes [0, n) of 8 set (all ones), the others clear; n may be <= 0 or >= 8.
__m256 first_lanes(int n) {
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}

// out[0..d) = src[0..d) as f32 (F16 or BF16 source).
void convert_row(const uint8_t* src, DType dtype, int d, float* out) {
  int i = 0;
  if (dtype == DType::F16) {
    for (; i + 8 <= d; i += 8) _mm256_store_ps(out + i, _mm256_cvtph_ps(load128(src + 2 * i)));
    for (; i < d; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      out[i] = _cvtsh_ss(h);
    }
  } else {  // BF16
    for (; i + 8 <= d; i += 8)
      _mm256_store_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(src + 2 * i)), 16)));
    for (; i < d; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      const uint32_t bits = static_cast<uint32_t>(h) << 16;
      std::memcpy(out + i, &bits, 4);
    }
  }
}

// out[0..n) = codes[0..n) * scale (a run of one Q8_0 block), 8 codes per
// step: the same products as the portable level's.
void avx2_dequant_run(const int8_t* codes, float scale, int n, float* out) {
  const __m256 s = _mm256_set1_ps(scale);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    int64_t eight;
    std::memcpy(&eight, codes + i, 8);
    const __m256i q = _mm256_cvtepi8_epi32(_mm_cvtsi64_si128(eight));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_cvtepi32_ps(q), s));
  }
  for (; i < n; ++i) out[i] = static_cast<float>(codes[i]) * scale;
}

// dst[r * dpad + 0..d) = kv head `head` of cache slot slots[r] as f32, r < n_rows.
void load_rows(const void* base, DType dtype, const int64_t* slots, int n_rows, int64_t row_stride, int head, int d,
               int dpad, float* dst) {
  load_rows_with(convert_row, avx2_dequant_run, base, dtype, slots, n_rows, row_stride, head, d, dpad, dst);
}

// A chunk's 16 key (or value) rows as the fold reads them: converted f32 rows
// of the scratch (stride dpad), or, with F16 set, the cache's F16 rows
// themselves, `stride` elements apart (one block holds the whole chunk), each
// 8-value piece converted where it is used. Both give the same floats.
template <bool F16>
struct ChunkRows {
  const std::conditional_t<F16, uint16_t, float>* base;
  int64_t stride;  // elements from one row to the next
  // Values 8b .. 8b + 7 of row r.
  [[gnu::always_inline]] inline __m256 load8(int r, int b) const {
    if constexpr (F16)
      return _mm256_cvtph_ps(load128(base + r * stride + 8 * b));
    else
      return _mm256_load_ps(base + r * stride + 8 * b);
  }
  // The rows from value `offset` on (a multiple of 8).
  [[gnu::always_inline]] inline ChunkRows from(int offset) const { return {base + offset, stride}; }
};

}  // namespace
}  // namespace db::kernels
#endif

// AVX-512 (F/BW/VL) integer kernels: u8 x s8 products via vpmaddubsw + vpmaddwd.
#if defined(__x86_64__)
#include <cstddef>
#include <cstring>

#include "kernels/cpu/x86/avx512_util.h"
#include "kernels/cpu/x86/tile_dispatch.h"
#include "kernels/quant_blocks.h"
#include "util/fp16.h"

#define DB_GEMM_VNNI 0

namespace db::kernels::avx512 {

namespace {

// Sums of 4 adjacent u8 x s8 products per int32 lane (u * |s| * 2 < 32768).
__m512i dot4(__m512i u, __m512i s) {
  return _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1));
}

// int32 scale lanes -> the same scale in both 16-bit halves (for vpmaddwd on 16-bit pairs).
__m512i prep_scales(__m512i sc32) {
  const __m512i lo = _mm512_and_si512(sc32, _mm512_set1_epi32(0xFFFF));
  return _mm512_or_si512(lo, _mm512_slli_epi32(sc32, 16));
}

// acc + scale * (sum of 4 products) per int32 lane.
__m512i scaled_dot_acc(__m512i acc, __m512i u, __m512i s, __m512i prepared_scale) {
  return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), prepared_scale));
}

#include "kernels/cpu/x86/gemm_avx512_q32.inc"
#include "kernels/cpu/x86/gemm_avx512_qk.inc"

}  // namespace

void gemm_q4_0(const GemmTile& t) { dispatch_tile<SymmetricKernel<BlockQ4_0, 8>, kAvx512TileRows, kAvx512TileTokens>(t); }
void gemm_q4_1(const GemmTile& t) { dispatch_tile<OffsetKernel<BlockQ4_1>, kAvx512TileRows, kAvx512TileTokens>(t); }
void gemm_q5_0(const GemmTile& t) { dispatch_tile<SymmetricKernel<BlockQ5_0, 16>, kAvx512TileRows, kAvx512TileTokens>(t); }
void gemm_q5_1(const GemmTile& t) { dispatch_tile<OffsetKernel<BlockQ5_1>, kAvx512TileRows, kAvx512TileTokens>(t); }
void gemm_q8_0(const GemmTile& t) { dispatch_tile<PairKernel<Q8_0Pair>, kAvx512TileRows, kAvx512TileTokens>(t); }
void gemm_q4_k(const GemmTile& t) { dispatch_tile<KKernel<Q4K>, kKRows, kKTokens>(t); }
void gemm_q5_k(const GemmTile& t) { dispatch_tile<KKernel<Q5K>, kKRows, kKTokens>(t); }
void gemm_q6_k(const GemmTile& t) { dispatch_tile<KKernel<Q6K>, kKRows, kKTokens>(t); }

}  // namespace db::kernels::avx512
#endif

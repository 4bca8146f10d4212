// AVX-512 VNNI integer kernels: u8 x s8 products via vpdpbusd, sub-block
// scaling via vpdpwssd.
#if defined(__x86_64__)
#include <cstddef>
#include <cstring>

#include "kernels/cpu/x86/avx512_util.h"
#include "kernels/cpu/x86/tile_dispatch.h"
#include "kernels/quant_blocks.h"
#include "util/fp16.h"

#define DB_GEMM_VNNI 1

namespace db::kernels::avx512vnni {

namespace {

// Sums of 4 adjacent u8 x s8 products per int32 lane.
__m512i dot4(__m512i u, __m512i s) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, s); }

// int32 scale lanes -> scale in the low 16 bits, zero in the high 16 bits, so that
// vpdpwssd multiplies only the low half of a dot4() lane (|dot4| < 32768 for K-quants).
__m512i prep_scales(__m512i sc32) { return _mm512_and_si512(sc32, _mm512_set1_epi32(0xFFFF)); }

// acc + scale * (sum of 4 products) per int32 lane.
__m512i scaled_dot_acc(__m512i acc, __m512i u, __m512i s, __m512i prepared_scale) {
  return _mm512_dpwssd_epi32(acc, dot4(u, s), prepared_scale);
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

}  // namespace db::kernels::avx512vnni
#endif

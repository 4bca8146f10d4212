// Shared parts of the AVX-512 VNNI Panels16 kernels (panel_avx512vnni.cpp for
// 32-element blocks, panel_k_avx512vnni.cpp for K-quants): operand loads and
// the tile drivers. Included only by files built for that level; everything
// here has internal linkage (see src/kernels/CMakeLists.txt).
#pragma once
#if defined(__x86_64__)

#include "kernels/cpu/panel_tile_tokens.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/x86/avx512_util.h"
#include "kernels/cpu/x86/exp_avx512.h"

// Register-array helpers must inline: out of line, their arrays of vectors
// pass through memory on every call.
#define DB_PANEL_INLINE inline __attribute__((always_inline))

namespace db::kernels::avx512vnni {
namespace {

// The 4 bytes at p in every lane (a broadcast load: no general register on the way).
__m512i broadcast4(const void* p) { return _mm512_broadcastd_epi32(_mm_loadu_si32(p)); }

// The 4-bit codes of one 32-element chunk: register i holds elements 4i..4i+3 of every row.
DB_PANEL_INLINE void load_nibbles(const uint8_t* codes, __m512i (&c)[8]) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (int i = 0; i < 4; ++i) {
    const __m512i v = load512(codes + 64 * i);
    c[i] = _mm512_and_si512(v, low4);
    c[i + 4] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
  }
}

// (a & b) | c per bit.
inline __m512i and_or(__m512i a, __m512i b, __m512i c) { return _mm512_ternarylogic_epi32(a, b, c, 0xEA); }

// Moves bit `from` of every byte of v to bit `to` (other bits: garbage to mask).
template <int From, int To>
__m512i move_bits(__m512i v) {
  if constexpr (From < To) return _mm512_slli_epi16(v, To - From);
  if constexpr (From > To) return _mm512_srli_epi16(v, From - To);
  return v;
}

// Adds the fifth bits (worth 16) to the 4-bit codes c of a 32-element chunk
// (c[i]: elements 4i..4i+3 of every row) from the chunk's 64-byte fifth-bit
// register at `high`: bit i of lane r, byte e is the fifth bit of element
// 4i + e (Q5_0 / Q5_1: panels.h; Q5_K: panel_k_layout.h).
DB_PANEL_INLINE void merge_fifth_bits(const uint8_t* high, __m512i (&c)[8]) {
  const __m512i h = load512(high), bit4 = _mm512_set1_epi8(0x10);
  c[0] = and_or(move_bits<0, 4>(h), bit4, c[0]);
  c[1] = and_or(move_bits<1, 4>(h), bit4, c[1]);
  c[2] = and_or(move_bits<2, 4>(h), bit4, c[2]);
  c[3] = and_or(move_bits<3, 4>(h), bit4, c[3]);
  c[4] = and_or(h, bit4, c[4]);
  c[5] = and_or(move_bits<5, 4>(h), bit4, c[5]);
  c[6] = and_or(move_bits<6, 4>(h), bit4, c[6]);
  c[7] = and_or(move_bits<7, 4>(h), bit4, c[7]);
}

__m512 load_halves(const uint8_t* p) { return _mm512_cvtph_ps(load256(p)); }

// How far ahead of the bytes being computed on its weights are prefetched.
constexpr int64_t kPrefetchBytes = 8192;

// Prefetches into L2 every cache line of the `bytes` bytes that start
// kPrefetchBytes past `from`. The kernels call it once per block with that
// block's slice of its group's bytes, codes and headers together (block b:
// group + b * block bytes, block bytes long), so the calls of one group cover
// all of its bytes shifted kPrefetchBytes ahead, into the groups the driver
// walks next. A wide group is tens of KB, and the hardware prefetcher alone
// keeps too few lines in flight. L2, not L1: a single-token product streams
// its weights from memory, and prefetches into L1 hold the few L1 miss
// buffers, which caps one core's stream. Headers too: prefetching the codes
// alone left every header line (one in nine of a Q4_0 stream) to miss. The
// distance is the best of those tried (bench/kernels/README.md).
DB_PANEL_INLINE void prefetch_ahead(const uint8_t* from, int64_t bytes) {
  const uint8_t* ahead = from + kPrefetchBytes;
  for (int64_t l = 0; l < bytes; l += 64) _mm_prefetch(reinterpret_cast<const char*>(ahead + l), _MM_HINT_T1);
  if (bytes % 64 != 0) _mm_prefetch(reinterpret_cast<const char*>(ahead + bytes - 1), _MM_HINT_T1);
}

// acc + the dot products of the 16 lanes of w with the 4 bytes at p (signed),
// those bytes broadcast by the instruction itself: one fused load-and-multiply
// instead of a broadcast and a multiply (the compiler does not merge them).
DB_PANEL_INLINE __m512i dpbusd_broadcast(__m512i acc, __m512i w, const int8_t* p) {
  asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const int32_t*>(p)));
  return acc;
}

// init + the dot products of one token (its activation codes at q) with code
// registers w[I0, I1), where w[i] holds elements 4i..4i+3 of every row: two
// chains (even and odd registers, added at the end) to hide the product
// latency. Exact integers in any order. The kernels call it token by token,
// each token's float steps right after its dots: then only two integer chains
// are live, and the float sums of all tokens stay in registers beside the 8
// code registers (with every token's integer sums live at once, half the sums
// spill). Embedded: the activation bytes come as the instruction's
// broadcast operand (dpbusd_broadcast), which suits the K-quant kernels; the
// 32-element ones use a separate broadcast load.
template <int I0, int I1, bool Embedded>
DB_PANEL_INLINE __m512i token_dots(const __m512i (&w)[8], const int8_t* q, __m512i init) {
  static_assert((I1 - I0) % 2 == 0);
  __m512i even = init, odd = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int i = I0; i < I1; i += 2) {
    if constexpr (Embedded) {
      even = dpbusd_broadcast(even, w[i], q + 4 * i);
      odd = dpbusd_broadcast(odd, w[i + 1], q + 4 * i + 4);
    } else {
      even = _mm512_dpbusd_epi32(even, w[i], broadcast4(q + 4 * i));
      odd = _mm512_dpbusd_epi32(odd, w[i + 1], broadcast4(q + 4 * i + 4));
    }
  }
  return _mm512_add_epi32(even, odd);
}

// One block of 16 rows: codes c[i] (elements 4i..4i+3 of every row), scales d
// and, with HasMin, offsets m. Bits: 4 (two codes per byte), 5 (4-bit codes,
// then the fifth-bit register: panels.h) or 8.
template <int Bits, int ZeroPoint, bool HasMin>
struct PanelBlock {
  static_assert(Bits == 4 || Bits == 5 || Bits == 8);
  static constexpr int kZeroPoint = ZeroPoint;
  static constexpr bool kHasMin = HasMin;
  static constexpr int64_t kCodeBytes = 4 * Bits * 16, kHeaderBytes = HasMin ? 64 : 32;
  static constexpr int64_t kBlockBytes = kCodeBytes + kHeaderBytes;  // a block's slice of its group's bytes
  __m512i c[8];
  __m512 d, m;
  void load(const uint8_t* codes, const uint8_t* header) {
    if constexpr (Bits == 8) {
      for (int i = 0; i < 8; ++i) c[i] = load512(codes + 64 * i);
    } else {
      load_nibbles(codes, c);
      if constexpr (Bits == 5) merge_fifth_bits(codes + kPanelFifthBits, c);
    }
    d = load_halves(header);
    if (HasMin) m = load_halves(header + 32);
  }
};
using Q4_0Block = PanelBlock<4, 8, false>;
using Q4_1Block = PanelBlock<4, 0, true>;
using Q5_0Block = PanelBlock<5, 16, false>;
using Q5_1Block = PanelBlock<5, 0, true>;
using Q8_0Block = PanelBlock<8, 128, false>;

__mmask16 row_mask(const GemmTile& t) { return static_cast<__mmask16>((1u << t.nr) - 1u); }

// Stores acc[j] as token t.t0 + j's t.nr rows of the tile's output.
template <int NT>
DB_PANEL_INLINE void store_tile(const GemmTile& t, const __m512 (&acc)[NT]) {
  for (int j = 0; j < NT; ++j) _mm512_mask_storeu_ps(t.y + j * t.ldy, row_mask(t), acc[j]);
}

// silu(gate) * up with the operations of avx512::swiglu (activations_avx512.cpp).
template <int NT>
DB_PANEL_INLINE void swiglu_in_place(__m512 (&gate)[NT], const __m512 (&up)[NT]) {
  for (int j = 0; j < NT; ++j) {
    const __m512 silu =
        _mm512_div_ps(gate[j], _mm512_add_ps(_mm512_set1_ps(1.0f), exp512(_mm512_sub_ps(_mm512_setzero_ps(), gate[j]))));
    gate[j] = _mm512_mul_ps(silu, up[j]);
  }
}

// P::products<NT>(tile, group, acc) sets acc[j] to the 16 rows of the group
// starting at `group` . token t.t0 + j, for j < NT.
template <class P, int NT>
void run(const GemmTile& t) {
  __m512 acc[NT];
  P::template products<NT>(t, t.w, acc);
  store_tile(t, acc);
}

template <class P, int NT>
void run_swiglu(const GemmTile& t, const uint8_t* up) {
  __m512 gate[NT], u[NT];
  P::template products<NT>(t, t.w, gate);
  P::template products<NT>(t, up, u);
  swiglu_in_place(gate, u);
  store_tile(t, gate);
}

// The tile kernels of products P.
template <class P>
void panel_gemm(const GemmTile& t) {
  with_tokens(t, []<int NT>(const GemmTile& tile) { run<P, NT>(tile); });
}

template <class P>
void panel_gemm_swiglu(const GemmTile& t, const uint8_t* up) {
  with_tokens(t, [up]<int NT>(const GemmTile& tile) { run_swiglu<P, NT>(tile, up); });
}

}  // namespace
}  // namespace db::kernels::avx512vnni
#endif

// Shared parts of the AVX2 Panels16 kernels (panel_avx2.cpp for 32-element
// blocks, panel_k_avx2.cpp for K-quants): operand loads, the integer dot
// products and the tile drivers. Included only by files built for AVX2;
// everything here has internal linkage (see src/kernels/CMakeLists.txt).
//
// A group's 16 rows are two halves of 8 (a register's 8 int32 / float lanes):
// half h holds rows 8h..8h+7, the bytes [32h, 32h + 32) of every 64-byte
// register of the layout. AVX2 has no vpdpbusd: a token's 4 activation bytes
// against 4 codes per lane are one vpmaddubsw (two int16 sums of 2 products),
// several of those are added in int16 while they cannot overflow, and one
// vpmaddwd by 1 turns the int16 pairs into the lane's int32 dot product. The
// broadcast of the activation bytes costs about as much as the multiply, so
// the kernels work on both halves at once, 16 elements at a time (8 code
// registers, each broadcast serving two vpmaddubsw): every token's first 16
// elements, then its last 16. The integers are the VNNI
// kernels' exactly, and the float operations are the same in the same order
// (kernels/cpu/panels.h), so every bit agrees.
//
// The same sources build a second time as the avx2vnni kernels (the files
// panel_avx2vnni.cpp and panel_k_avx2vnni.cpp define DB_PANEL_AVX_VNNI and
// are compiled with -mavxvnni): there each 4 activation bytes against 4 codes
// per lane are one VEX vpdpbusd into the lane's int32 sum, with no int16
// stage (add_dots16_halves), and the float steps stay the same.
#pragma once
#if defined(__x86_64__)

#include "kernels/cpu/panel_tile_tokens.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/x86/avx2_util.h"
#include "kernels/cpu/x86/exp_avx2.h"

// Register-array helpers must inline: out of line, their arrays of vectors
// pass through memory on every call.
#define DB_PANEL_INLINE inline __attribute__((always_inline))

#if defined(DB_PANEL_AVX_VNNI)
#define DB_PANEL_AVX2_NS avx2vnni
#else
#define DB_PANEL_AVX2_NS avx2
#endif

namespace db::kernels::DB_PANEL_AVX2_NS {

// The fused-gate entry points of the two files (panel_kernels() collects them;
// the plain panel_* ones are declared in kernels/cpu/panels.h).
void panel_swiglu_q4_0(const GemmTile&, const uint8_t* up);
void panel_swiglu_q4_1(const GemmTile&, const uint8_t* up);
void panel_swiglu_q5_0(const GemmTile&, const uint8_t* up);
void panel_swiglu_q5_1(const GemmTile&, const uint8_t* up);
void panel_swiglu_q8_0(const GemmTile&, const uint8_t* up);
void panel_swiglu_q4_k(const GemmTile&, const uint8_t* up);
void panel_swiglu_q5_k(const GemmTile&, const uint8_t* up);
void panel_swiglu_q6_k(const GemmTile&, const uint8_t* up);

namespace {

constexpr int kHalves = 2;

// Nibble Shift (0: low, 4: high) of half h of the 4 64-byte code registers
// at regs: w[i] holds 4 nibbles of each of the half's 8 rows. For a 32-element
// chunk of 4-bit codes, elements 4i..4i+3 (Shift 0) or 16+4i..16+4i+3 (Shift 4).
template <int Shift>
DB_PANEL_INLINE void load_nibble_regs(const uint8_t* regs, int h, __m256i (&w)[4]) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int i = 0; i < 4; ++i) {
    const __m256i v = load256(regs + 64 * i + 32 * h);
    w[i] = _mm256_and_si256(Shift == 0 ? v : _mm256_srli_epi16(v, Shift), low4);
  }
}

// (a & b) | c per bit.
inline __m256i and_or(__m256i a, __m256i b, __m256i c) { return _mm256_or_si256(_mm256_and_si256(a, b), c); }

// Moves bit `from` of every byte of v to bit `to` (other bits: garbage to mask).
template <int From, int To>
__m256i move_bits(__m256i v) {
  if constexpr (From < To) return _mm256_slli_epi16(v, To - From);
  if constexpr (From > To) return _mm256_srli_epi16(v, From - To);
  return v;
}

// Adds the fifth bits (worth 16) to the 4-bit codes w of half h, part P (0:
// elements 0..15 of a chunk, 1: 16..31; w[i] holds elements 16P + 4i .. + 3),
// from the chunk's 64-byte fifth-bit register at `high`: bit i of lane r, byte
// e is the fifth bit of element 4i + e (Q5_0 / Q5_1: panels.h; Q5_K:
// panel_k_layout.h).
template <int P>
DB_PANEL_INLINE void merge_fifth_bits(const uint8_t* high, int h, __m256i (&w)[4]) {
  const __m256i hb = load256(high + 32 * h), bit4 = _mm256_set1_epi8(0x10);
  w[0] = and_or(move_bits<4 * P + 0, 4>(hb), bit4, w[0]);
  w[1] = and_or(move_bits<4 * P + 1, 4>(hb), bit4, w[1]);
  w[2] = and_or(move_bits<4 * P + 2, 4>(hb), bit4, w[2]);
  w[3] = and_or(move_bits<4 * P + 3, 4>(hb), bit4, w[3]);
}

// 8 fp16 values at p as floats.
__m256 load_halves(const uint8_t* p) { return _mm256_cvtph_ps(load128(p)); }

// The 4 bytes at p in every lane.
inline __m256i broadcast4(const void* p) { return _mm256_broadcastd_epi32(_mm_loadu_si32(p)); }

// The two halves' vpmaddubsw of 16 elements of one token: w[h][i] holds
// elements 4i..4i+3 of half h's rows, the token's activation bytes are
// q[0..16), and each of the 4 broadcasts serves both halves. Per half, the
// int16 sums of the 4 products (dot16_halves) or of products 0-1 and 2-3
// (dot8x2_halves, for codes too wide to add 4). Callers keep codes * 127 * 2
// * (products per sum) below 32768. Each is one asm block: as intrinsics, the
// compiler issues every vpmaddubsw of a tile first and passes each product
// through the stack.
DB_PANEL_INLINE void dot16_halves(const __m256i (&w)[kHalves][4], const int8_t* q, __m256i& s0, __m256i& s1) {
  __m256i t, u;
  asm("vpbroadcastd (%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w00], %[s0]\n\t"
      "vpmaddubsw %[t], %[w10], %[s1]\n\t"
      "vpbroadcastd 4(%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w01], %[u]\n\t"
      "vpaddw %[u], %[s0], %[s0]\n\t"
      "vpmaddubsw %[t], %[w11], %[t]\n\t"
      "vpaddw %[t], %[s1], %[s1]\n\t"
      "vpbroadcastd 8(%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w02], %[u]\n\t"
      "vpaddw %[u], %[s0], %[s0]\n\t"
      "vpmaddubsw %[t], %[w12], %[t]\n\t"
      "vpaddw %[t], %[s1], %[s1]\n\t"
      "vpbroadcastd 12(%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w03], %[u]\n\t"
      "vpaddw %[u], %[s0], %[s0]\n\t"
      "vpmaddubsw %[t], %[w13], %[t]\n\t"
      "vpaddw %[t], %[s1], %[s1]"
      : [s0] "=&x"(s0), [s1] "=&x"(s1), [t] "=&x"(t), [u] "=&x"(u)
      : [q] "r"(q), "m"(*reinterpret_cast<const int8_t(*)[16]>(q)), [w00] "x"(w[0][0]), [w01] "x"(w[0][1]),
        [w02] "x"(w[0][2]), [w03] "x"(w[0][3]), [w10] "x"(w[1][0]), [w11] "x"(w[1][1]), [w12] "x"(w[1][2]),
        [w13] "x"(w[1][3]));
}

// a[h]: products 0 and 1 of half h, b[h]: products 2 and 3 (see dot16_halves).
DB_PANEL_INLINE void dot8x2_halves(const __m256i (&w)[kHalves][4], const int8_t* q, __m256i (&a)[kHalves],
                                   __m256i (&b)[kHalves]) {
  __m256i t, u;
  asm("vpbroadcastd (%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w00], %[a0]\n\t"
      "vpmaddubsw %[t], %[w10], %[a1]\n\t"
      "vpbroadcastd 4(%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w01], %[u]\n\t"
      "vpaddw %[u], %[a0], %[a0]\n\t"
      "vpmaddubsw %[t], %[w11], %[t]\n\t"
      "vpaddw %[t], %[a1], %[a1]\n\t"
      "vpbroadcastd 8(%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w02], %[b0]\n\t"
      "vpmaddubsw %[t], %[w12], %[b1]\n\t"
      "vpbroadcastd 12(%[q]), %[t]\n\t"
      "vpmaddubsw %[t], %[w03], %[u]\n\t"
      "vpaddw %[u], %[b0], %[b0]\n\t"
      "vpmaddubsw %[t], %[w13], %[t]\n\t"
      "vpaddw %[t], %[b1], %[b1]"
      : [a0] "=&x"(a[0]), [a1] "=&x"(a[1]), [b0] "=&x"(b[0]), [b1] "=&x"(b[1]), [t] "=&x"(t), [u] "=&x"(u)
      : [q] "r"(q), "m"(*reinterpret_cast<const int8_t(*)[16]>(q)), [w00] "x"(w[0][0]), [w01] "x"(w[0][1]),
        [w02] "x"(w[0][2]), [w03] "x"(w[0][3]), [w10] "x"(w[1][0]), [w11] "x"(w[1][1]), [w12] "x"(w[1][2]),
        [w13] "x"(w[1][3]));
}

// The int32 sums of each lane's two int16 values.
inline __m256i widen(__m256i s16) { return _mm256_madd_epi16(s16, _mm256_set1_epi16(1)); }

#if defined(DB_PANEL_AVX_VNNI)
// s0 / s1 (half 0 / 1) plus the int32 dot products of 16 elements of the
// half's rows (w[h][i]: elements 4i..4i+3) with the token's 16 activation
// bytes at q: 4 vpdpbusd per half, each broadcast serving both halves. Exact
// integers (vpdpbusd does not saturate), so equal to the int16 route's sums.
DB_PANEL_INLINE void add_dots16_halves(const __m256i (&w)[kHalves][4], const int8_t* q, __m256i& s0, __m256i& s1) {
  for (int i = 0; i < 4; ++i) {
    const __m256i a = broadcast4(q + 4 * i);
    s0 = _mm256_dpbusd_avx_epi32(s0, w[0][i], a);
    s1 = _mm256_dpbusd_avx_epi32(s1, w[1][i], a);
  }
}
#endif

// The int32 dot products of a 32-element chunk of Bits-bit codes (4: nibbles;
// 5: nibbles with the fifth bit merged in) with one token, both halves, in
// two passes of 16 elements (the caller loads each pass's code registers
// before it, for all the tile's tokens). AVX2 keeps each pass's int16 sums
// (4-bit: added in int16, as 8 products of 15 * 127 * 2 fit; 5-bit: widened
// each) and widens them at the end; AVX-VNNI sums in int32 from the start.
template <int Bits>
struct ChunkDots {
  static_assert(Bits == 4 || Bits == 5);
#if defined(DB_PANEL_AVX_VNNI)
  __m256i s[kHalves];
  DB_PANEL_INLINE void first(const __m256i (&w)[kHalves][4], const int8_t* q) {
    s[0] = s[1] = _mm256_setzero_si256();
    add_dots16_halves(w, q, s[0], s[1]);
  }
  DB_PANEL_INLINE void second(const __m256i (&w)[kHalves][4], const int8_t* q) { add_dots16_halves(w, q, s[0], s[1]); }
  DB_PANEL_INLINE __m256i total(int h) const { return s[h]; }
#else
  __m256i lo[kHalves], hi[kHalves];
  DB_PANEL_INLINE void first(const __m256i (&w)[kHalves][4], const int8_t* q) { dot16_halves(w, q, lo[0], lo[1]); }
  DB_PANEL_INLINE void second(const __m256i (&w)[kHalves][4], const int8_t* q) { dot16_halves(w, q, hi[0], hi[1]); }
  DB_PANEL_INLINE __m256i total(int h) const {
    return Bits == 4 ? widen(_mm256_add_epi16(lo[h], hi[h])) : _mm256_add_epi32(widen(lo[h]), widen(hi[h]));
  }
#endif
};

// The accumulators of a tile of NT tokens, for one pass of a loop over
// blocks. From 4 tokens on they outnumber the registers: then they are
// reached through a pointer the compiler cannot follow, which keeps them in
// memory between passes (one load and one store per update), where the
// compiler would otherwise carry them in registers across the loop, spill
// those, and store every update a second time.
template <int NT, class T>
DB_PANEL_INLINE T& pass_sums(T& acc) {
  if constexpr (NT < 4) {
    return acc;
  } else {
    T* p = &acc;
    asm("" : "+r"(p));
    return *p;
  }
}

// Stores half h of a tile's results for one token (rows 8h.. of the nr valid;
// none when nr <= 8h: both halves are computed, a group's padding rows being
// zero codes, and the masked store touches no memory).
void store_half(const GemmTile& t, int h, float* y, __m256 v) {
  const int rows = t.nr - 8 * h;
  if (rows >= 8) return _mm256_storeu_ps(y + 8 * h, v);
  const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  _mm256_maskstore_ps(y + 8 * h, m, v);
}

// P::products<NT>(tile, group, acc) sets acc[h][j] to half h of the group
// starting at `group` . token t.t0 + j, for j < NT.
template <class P, int NT>
void run(const GemmTile& t) {
  __m256 acc[kHalves][NT];
  P::template products<NT>(t, t.w, acc);
  // Both halves (one without valid rows stores nothing): constant bounds.
  for (int h = 0; h < kHalves; ++h)
    for (int j = 0; j < NT; ++j) store_half(t, h, t.y + j * t.ldy, acc[h][j]);
}

// silu(gate) * up with the operations of avx2::swiglu (activations_avx2.cpp).
template <class P, int NT>
void run_swiglu(const GemmTile& t, const uint8_t* up) {
  __m256 silu[kHalves][NT], u[kHalves][NT];
  P::template products<NT>(t, t.w, silu);
  P::template products<NT>(t, up, u);
  for (int h = 0; h < kHalves; ++h)  // constant bounds, as in run()
    for (int j = 0; j < NT; ++j) {
      const __m256 g = silu[h][j];
      const __m256 s = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), exp256(_mm256_sub_ps(_mm256_setzero_ps(), g))));
      store_half(t, h, t.y + j * t.ldy, _mm256_mul_ps(s, u[h][j]));
    }
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
}  // namespace db::kernels::DB_PANEL_AVX2_NS
#endif

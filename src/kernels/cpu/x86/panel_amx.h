// Shared parts of the AMX Panels16 kernels (panel_amx.cpp for 32-element
// blocks, panel_k_amx.cpp for K-quants): the tile configuration, the staging of
// a chunk's weight codes as a B tile, and the product of one or two chunks.
// Included only by files built for AMX-INT8 (on top of AVX-512 VNNI);
// everything here has internal linkage (see src/kernels/CMakeLists.txt).
//
// One chunk is 32 elements of the group's 16 rows against the 16 tokens of an
// activation tile:
//   A (tokens x 32 bytes)     the tile's activation codes for the chunk, int8,
//                             read in place (Tiles layout: one token per row)
//   B (8 x 64 bytes)          the chunk's weight codes in the VNNI order of the
//                             panel layout: row i holds elements 4i..4i+3 of
//                             every weight row, exactly what the VNNI kernels'
//                             code register i holds
//   C (16 x 16 int32)         C[token][row] = sum_k A[token][k] * B-code(row, k)
// A TDPBSSD / TDPBUSD gives each (token, row) the same exact integer dot
// product as the VNNI kernels' eight vpdpbusd, so the float steps after it,
// which are the VNNI kernels' own in the same order, give the same bits.
// Zero points are folded into signed codes where a format has one
// (sum (code - zp) * a == sum code * a - zp * sum a, exactly).
#pragma once
#if defined(__x86_64__)

#include "kernels/cpu/x86/panel_avx512vnni.h"

namespace db::kernels::amx {
namespace {

// Tile registers: C tiles 0-3 (int32 results), A tiles 4-5 (activations),
// B tiles 6-7 (weights). Every AMX kernel of the process uses this one
// configuration, so a thread loads it once (ensure_tile_config). The tile
// intrinsics take register numbers as literals: C0 = 0, C1 = 1, A0 = 4,
// A1 = 5, B0 = 6, B1 = 7.

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

inline TileConfig panel_tile_config() {
  TileConfig c;
  for (int i : {0, 1, 2, 3}) c.rows[i] = 16, c.colsb[i] = 64;  // C
  for (int i : {4, 5}) c.rows[i] = 16, c.colsb[i] = 32;        // A
  for (int i : {6, 7}) c.rows[i] = 8, c.colsb[i] = 64;         // B
  return c;
}

// Loads the configuration on the calling thread's first AMX product. Nothing
// else in the process configures tiles, so it stays loaded.
inline void ensure_tile_config() {
  thread_local bool loaded = false;
  if (__builtin_expect(loaded, 1)) return;
  static const TileConfig config = panel_tile_config();
  _tile_loadconfig(&config);
  loaded = true;
}

// The staged B tiles and the C results of a batch of up to kBatch chunks.
// A kernel stages a batch, runs its tile products back to back, then runs
// their float steps, rather than interleaving each chunk's tile product with
// the float steps of earlier ones: the tile loads and stores are microcoded
// and stall the vector work around them.
constexpr int kBatch = 8;
struct alignas(64) ChunkBuffers {
  uint8_t b[kBatch][512];
  int32_t c[kBatch][16 * 16];
};

// Stores code registers w[i] (elements 4i..4i+3 of every row) as B tile rows,
// minus Zp per byte (0: unsigned codes; 8, 16, 32: signed codes; 128 as an xor).
template <int Zp>
DB_PANEL_INLINE void stage_codes(const __m512i (&w)[8], uint8_t* b) {
  for (int i = 0; i < 8; ++i) {
    __m512i v = w[i];
    if constexpr (Zp == 128)
      v = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
    else if constexpr (Zp != 0)
      v = _mm512_sub_epi8(v, _mm512_set1_epi8(Zp));
    _mm512_store_si512(b + 64 * i, v);
  }
}

// Tile loads and stores that declare the memory they touch. GCC's intrinsics
// declare none for loads (so staging stores could sink past them) and a
// clobber of all memory for stores (which keeps the float steps'
// accumulators and pointers in memory). B tiles and C tiles are contiguous
// (64-byte rows); A tiles are activations, written before the kernel runs.
#define DB_TILE_LOAD_A(t, p, stride) asm volatile("tileloadd (%0,%1,1), %%tmm" #t ::"r"(p), "r"(stride))
#define DB_TILE_LOAD_B(t, p) \
  asm volatile("tileloadd (%1,%2,1), %%tmm" #t ::"m"(*reinterpret_cast<const uint8_t(*)[512]>(p)), "r"(p), "r"(int64_t{64}))
#define DB_TILE_STORE_C(t, p) \
  asm volatile("tilestored %%tmm" #t ", (%1,%2,1)" : "=m"(*reinterpret_cast<int32_t(*)[256]>(p)) : "r"(p), "r"(int64_t{64}))

// One chunk's tile product in slot s: A from `acts` (one token per `stride`
// bytes), B from b[s], C stored to c[s]. The tile registers are literals in
// the instructions: C tile s % 4, A and B tiles alternating with s.
#define DB_AMX_CHUNK(kC, kA, kB)       \
  do {                                 \
    DB_TILE_LOAD_A(kA, acts, stride);  \
    DB_TILE_LOAD_B(kB, buf.b[s]);      \
    _tile_zero(kC);                    \
    if constexpr (Signed)              \
      _tile_dpbssd(kC, kA, kB);        \
    else                               \
      _tile_dpbsud(kC, kA, kB);        \
    DB_TILE_STORE_C(kC, buf.c[s]);     \
  } while (0)

// Signed: codes are int8 (TDPBSSD), else uint8 (TDPBSUD).
template <bool Signed>
DB_PANEL_INLINE void chunk_product(int s, const int8_t* acts, int64_t stride, ChunkBuffers& buf) {
  switch (s % 4) {
    case 0: DB_AMX_CHUNK(0, 4, 6); break;
    case 1: DB_AMX_CHUNK(1, 5, 7); break;
    case 2: DB_AMX_CHUNK(2, 4, 6); break;
    default: DB_AMX_CHUNK(3, 5, 7); break;
  }
}
#undef DB_AMX_CHUNK
#undef DB_TILE_LOAD_A
#undef DB_TILE_LOAD_B
#undef DB_TILE_STORE_C

// Stages chunks [first, first + n) (n <= kBatch) into slots 0..n-1 and runs
// their tile products: stage(i, b) writes chunk i's B tile to b (512 bytes),
// acts(i) gives chunk i's activations (one token per `stride` bytes). Then
// buf.c[i - first] holds chunk i's C[token][row].
template <bool Signed, class Stage, class Acts>
DB_PANEL_INLINE void run_batch(ChunkBuffers& buf, int64_t first, int n, int64_t stride, const Stage& stage,
                               const Acts& acts) {
  for (int s = 0; s < n; ++s) stage(first + s, buf.b[s]);
  for (int s = 0; s < n; ++s) chunk_product<Signed>(s, acts(first + s), stride, buf);
}

// Row r of a C tile (one token's 16 weight rows).
DB_PANEL_INLINE __m512i c_row(const int32_t* c, int r) { return _mm512_load_si512(c + 16 * r); }

// Token tiles below this many tokens run the VNNI kernels: the tile work per
// chunk (staging, loads, one store of 1 KB) costs about as much as a few
// tokens' vpdpbusd.
constexpr int kMinAmxTokens = 12;

// The kernels of products P: tile products for tiles of kMinAmxTokens tokens
// or more, else the VNNI kernels Vnni / VnniSwiglu.
template <class P, GemmTileFn Vnni>
void gemm_or_vnni(const GemmTile& t) {
  if (t.nt < kMinAmxTokens) return Vnni(t);
  avx512vnni::panel_gemm<P>(t);
}
template <class P, GemmSwigluTileFn VnniSwiglu>
void swiglu_or_vnni(const GemmTile& t, const uint8_t* up) {
  if (t.nt < kMinAmxTokens) return VnniSwiglu(t, up);
  avx512vnni::panel_gemm_swiglu<P>(t, up);
}
template <class P, GemmTileFn Vnni, GemmSwigluTileFn VnniSwiglu>
constexpr PanelKernels kernels_or_vnni() {
  return {gemm_or_vnni<P, Vnni>, swiglu_or_vnni<P, VnniSwiglu>};
}

}  // namespace
}  // namespace db::kernels::amx
#endif

// AMX Panels16 kernels for K-quant super-blocks (formula: kernels/cpu/panels.h;
// layout: kernels/cpu/panel_k_layout.h; the tile scheme: panel_amx.h) for
// Q4_K and Q5_K. Each 32-element chunk of a super-block is one tile product;
// the mins, the sub-block scales and the super-block scale are the VNNI
// kernels' float steps (panel_k_avx512vnni.cpp) in their order, so the results
// are bit-identical to them and to the scalar reference. Q6_K stays with the
// VNNI kernel: its 16-element sub-blocks need a tile product each (half of
// every B tile zero) for as many float steps, which is slower than VNNI.
#if defined(__x86_64__)
#include "kernels/cpu/x86/panel_amx.h"
#include "kernels/cpu/x86/panel_k_avx512vnni.h"

namespace db::kernels::amx {

namespace {

using avx512vnni::add_super_block;
using avx512vnni::load_chunk;
using avx512vnni::load_halves;
using avx512vnni::scaled_d;

// f[j] = fma(float(C[row0 + j]), dsc, f[j]) for every token.
template <int NT>
DB_PANEL_INLINE void fold_sub_block(const int32_t* c, int row0, __m512 dsc, __m512 (&f)[NT]) {
  const int32_t* rows = c + 16 * row0;  // token j's row at + 16 j
#pragma GCC unroll 16
  for (int j = 0; j < NT; ++j) f[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(c_row(rows, j)), dsc, f[j]);
}

// The activation codes of the tile's token row 0 for the super-block whose
// slot for token t0 is `slot` (token rows 256 bytes apart).
DB_PANEL_INLINE const int8_t* tile_acts(const QuantizedActs& a, int64_t slot, int row0) {
  return a.qs + (slot - row0) * 256;
}

// The super-blocks of a tile's group: codes, headers and activations.
template <class F>
struct SuperBlocks {
  const uint8_t* group;
  int64_t nb;     // super-blocks per row
  int64_t slot0;  // token t0's activation slot in super-block 0
  int row0;       // token t0's row in its activation tile
  SuperBlocks(const GemmTile& t, const uint8_t* g)
      : group(g), nb(t.cols / 256), slot0(act_slot(*t.acts, t.t0, 0)), row0(static_cast<int>(t.t0 % kActTileTokens)) {}
  const uint8_t* codes(int64_t b) const { return group + b * F::kCodeBytes; }
  const uint8_t* header(int64_t b) const { return group + nb * F::kCodeBytes + b * F::kHeaderBytes; }
  int64_t slot(int64_t b) const { return slot0 + b * kActTileTokens; }
  // The activation codes of chunk c of super-block b for the tile's token row 0.
  const int8_t* acts(const QuantizedActs& a, int64_t b, int c) const { return tile_acts(a, slot(b), row0) + 32 * c; }
  // Prefetches ahead an eighth of super-block b's slice of the group's bytes,
  // codes and header (eighth e; see avx512vnni::prefetch_ahead()).
  void prefetch(int64_t b, int e) const {
    constexpr int64_t kEighth = F::kBlockBytes / 8;
    avx512vnni::prefetch_ahead(group + (8 * b + e) * kEighth, kEighth);
  }
};

// Q4_K / Q5_K: f = the mins' term, then per chunk s f = fma(float(dot(s)), d * sc[s], f).
// Chunk i of the pipeline is chunk i % 8 of super-block i / 8.
template <DType T>
struct KMinProducts {
  using F = KFormat<T>;
  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    ensure_tile_config();
    const QuantizedActs& a = *t.acts;
    const SuperBlocks<F> sb(t, group);
    for (int j = 0; j < NT; ++j) acc[j] = _mm512_setzero_ps();
    const auto stage = [&](int64_t i, uint8_t* dst) {
      sb.prefetch(i / 8, static_cast<int>(i % 8));
      __m512i w[8];
      load_chunk<T>(sb.codes(i / 8), static_cast<int>(i % 8), w);
      stage_codes<0>(w, dst);
    };
    const auto acts = [&](int64_t i) { return sb.acts(a, i / 8, static_cast<int>(i % 8)); };
    ChunkBuffers buf;
    static_assert(kBatch == 8);  // a batch is one super-block
    for (int64_t b = 0; b < sb.nb; ++b) {
      run_batch<false>(buf, 8 * b, 8, 256, stage, acts);
      const __m512 d = load_halves(sb.header(b));
      __m512 f[NT];
      avx512vnni::min_terms<F>(a, sb.slot(b), sb.codes(b), sb.header(b), f);
      for (int c = 0; c < 8; ++c) {
        const __m512i sc = _mm512_cvtepu8_epi32(load128(sb.codes(b) + F::kScales + 16 * c));
        fold_sub_block(buf.c[c], sb.row0, scaled_d(d, sc), f);
      }
      add_super_block(a, sb.slot(b), f, acc);
    }
  }
};

}  // namespace

void k_panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  out[3] = kernels_or_vnni<KMinProducts<DType::Q4_K>, avx512vnni::panel_q4_k, avx512vnni::panel_swiglu_q4_k>();
  out[4] = kernels_or_vnni<KMinProducts<DType::Q5_K>, avx512vnni::panel_q5_k, avx512vnni::panel_swiglu_q5_k>();
  // Q6_K keeps the VNNI kernel (see the comment at the top).
}

}  // namespace db::kernels::amx
#endif

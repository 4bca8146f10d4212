// AMX Panels16 kernels for the 32-element block formats (layout and formula:
// kernels/cpu/panels.h; the tile scheme: panel_amx.h). A block is one chunk:
// its 16 x 16 integer dot products are one tile product, and the float steps
// per token are the VNNI kernels' (panel_avx512vnni.cpp) in their order, so
// the results are bit-identical to them and to the scalar reference.
#if defined(__x86_64__)
#include <algorithm>

#include "kernels/cpu/x86/panel_amx.h"
#include "kernels/quant_blocks.h"

namespace db::kernels::amx {

namespace {

// A format's VNNI block (avx512vnni::PanelBlock) with the zero point folded
// into its staged codes.
template <class Block>
struct Block32Format : Block {
  static constexpr bool kSigned = Block::kZeroPoint != 0;
  // Stages block `codes` into b as a B tile.
  static void stage(const uint8_t* codes, uint8_t* b) {
    Block w;
    w.load(codes, codes);  // the header loads are unused and dropped
    stage_codes<Block::kZeroPoint>(w.c, b);
  }
};
using Q4_0Format = Block32Format<avx512vnni::Q4_0Block>;
using Q4_1Format = Block32Format<avx512vnni::Q4_1Block>;
using Q8_0Format = Block32Format<avx512vnni::Q8_0Block>;

template <class W>
struct Block32Products {
  // sum[j] += block b's term for token j, from the block's C tile c (token j in row row0 + j).
  template <int NT>
  static DB_PANEL_INLINE void fold(const QuantizedActs& a, int64_t slot, const uint8_t* header, const int32_t* c,
                                   int row0, __m512 (&sum)[NT]) {
    const __m512 d = avx512vnni::load_halves(header);
    const int32_t* rows = c + 16 * row0;  // token j's row at + 16 j
    __m512 m = _mm512_setzero_ps();
    if constexpr (W::kHasMin) m = avx512vnni::load_halves(header + 32);
#pragma GCC unroll 16
    for (int j = 0; j < NT; ++j) {
      const __m512 dot = _mm512_cvtepi32_ps(c_row(rows, j));
      if (W::kHasMin) sum[j] = _mm512_fmadd_ps(m, _mm512_set1_ps(a.ds[slot + j]), sum[j]);
      sum[j] = _mm512_fmadd_ps(dot, _mm512_mul_ps(d, _mm512_set1_ps(a.d[slot + j])), sum[j]);
    }
  }

  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    ensure_tile_config();
    const QuantizedActs& a = *t.acts;
    const int64_t nb = t.cols / kQK;
    const uint8_t* headers = group + nb * W::kCodeBytes;
    const int row0 = static_cast<int>(t.t0 % kActTileTokens);
    const int64_t slot0 = act_slot(a, t.t0, 0);  // token t0 + j's block b: slot0 + b * kActTileTokens + j
    const int8_t* tile_acts = a.qs + (slot0 - row0) * kQK;  // the activation tile's block 0, token row 0
    constexpr int64_t kBlockActs = kActTileTokens * kQK;    // bytes between a tile's consecutive blocks
    __m512 sum[NT];
    for (int j = 0; j < NT; ++j) sum[j] = _mm512_setzero_ps();
    const auto stage = [&](int64_t b, uint8_t* dst) {
      avx512vnni::prefetch_ahead(group + b * W::kCodeBytes, W::kCodeBytes);
      W::stage(group + b * W::kCodeBytes, dst);
    };
    const auto acts = [&](int64_t b) { return tile_acts + b * kBlockActs; };
    ChunkBuffers buf;
    for (int64_t b0 = 0; b0 < nb; b0 += kBatch) {
      const int n = static_cast<int>(std::min<int64_t>(kBatch, nb - b0));
      run_batch<W::kSigned>(buf, b0, n, kQK, stage, acts);
      for (int i = 0; i < n; ++i) {
        const int64_t b = b0 + i;
        fold(a, slot0 + b * kActTileTokens, headers + b * W::kHeaderBytes, buf.c[i], row0, sum);
      }
    }
    for (int j = 0; j < NT; ++j) acc[j] = sum[j];
  }
};

}  // namespace

void panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  out[0] = kernels_or_vnni<Block32Products<Q4_0Format>, avx512vnni::panel_q4_0, avx512vnni::panel_swiglu_q4_0>();
  out[1] = kernels_or_vnni<Block32Products<Q4_1Format>, avx512vnni::panel_q4_1, avx512vnni::panel_swiglu_q4_1>();
  out[2] = kernels_or_vnni<Block32Products<Q8_0Format>, avx512vnni::panel_q8_0, avx512vnni::panel_swiglu_q8_0>();
  k_panel_kernels(out);
}

}  // namespace db::kernels::amx
#endif

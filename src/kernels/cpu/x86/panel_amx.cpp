// AMX Panels16 kernels for the 32-element block formats (layout and formula:
// kernels/cpu/panels.h; the tile scheme: panel_amx.h). A block is one chunk:
// its 16 x 16 integer dot products are one tile product, and the float steps
// per token are the VNNI kernels' (panel_avx512vnni.cpp) in their order, so
// the results are bit-identical to them and to the scalar reference.
#if defined(__x86_64__)
#include <algorithm>

#include "kernels/cpu/x86/panel_amx.h"
#include "kernels/cpu/x86/panel_amx_steps.h"
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
using Q5_0Format = Block32Format<avx512vnni::Q5_0Block>;  // codes - 16: signed
using Q5_1Format = Block32Format<avx512vnni::Q5_1Block>;
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

  // Stages blocks [0, 4 * (nb / 4)) of a group's codes as B tiles, block b at dst + 512 b.
  static void stage_steps(const uint8_t* group, int64_t nb, uint8_t* dst) {
    for (int64_t b = 0; b < nb / 4 * 4; ++b) {
      const uint8_t* codes = group + b * W::kCodeBytes;
      avx512vnni::prefetch_ahead(group + b * W::kBlockBytes, W::kBlockBytes);
      W::stage(codes, dst + 512 * b);
    }
  }

  // sum[j] = the group's 16 rows . token t.t0 + j of a whole tile (t.t0 a
  // multiple of kActTileTokens), its B tiles staged by stage_steps: blocks
  // [0, nb - nb % 4) in four-block steps (panel_amx_steps.h), the rest as a
  // batch. Blocks fold in increasing order.
  static void tile16(const GemmTile& t, const uint8_t* group, const uint8_t* staged, __m512 (&acc)[16]) {
    static_assert(W::kSigned == !W::kHasMin, "the steps pair signed codes with no mins");
    const QuantizedActs& a = *t.acts;
    const int64_t nb = t.cols / kQK, steps = nb / 4;
    const uint8_t* headers = group + nb * W::kCodeBytes;
    const int64_t slot0 = act_slot(a, t.t0, 0);  // block b's token j: slot0 + b * kActTileTokens + j
    const int8_t* tile_acts = a.qs + slot0 * kQK;
    StepBuffers buf;
    // Step g's tile products, and the float steps of step g - 1.
    const auto operands = [&](int64_t g) {
      const int64_t f = std::max<int64_t>(g - 1, 0);  // the step whose float steps run
      const int64_t fs = slot0 + 4 * f * kActTileTokens;
      return StepOperands{tile_acts + 4 * g * kActTileTokens * kQK, staged + 2048 * g, buf.c[g & 1][0],
                          buf.c[f & 1][0], headers + 4 * f * W::kHeaderBytes, a.d + fs,
                          W::kHasMin ? a.ds + fs : nullptr};
    };
    alignas(64) __m512 sum[16];
    for (auto& x : sum) x = _mm512_setzero_ps();
    if (steps > 0) {
      run_step<W::kHasMin, StepPart::kTiles>(operands(0), sum);
      for (int64_t g = 1; g < steps; ++g) run_step<W::kHasMin, StepPart::kBoth>(operands(g), sum);
      run_step<W::kHasMin, StepPart::kFolds>(operands(steps), sum);
    }
    batched<16>(t, group, 4 * steps, sum);
    for (int j = 0; j < 16; ++j) acc[j] = sum[j];
  }

  // Folds blocks [b_first, nb) into sum, in batches of kBatch.
  template <int NT>
  static void batched(const GemmTile& t, const uint8_t* group, int64_t b_first, __m512 (&sum)[NT]) {
    const QuantizedActs& a = *t.acts;
    const int64_t nb = t.cols / kQK;
    const uint8_t* headers = group + nb * W::kCodeBytes;
    const int row0 = static_cast<int>(t.t0 % kActTileTokens);
    const int64_t slot0 = act_slot(a, t.t0, 0);  // token t0 + j's block b: slot0 + b * kActTileTokens + j
    const int8_t* tile_acts = a.qs + (slot0 - row0) * kQK;  // the activation tile's block 0, token row 0
    constexpr int64_t kBlockActs = kActTileTokens * kQK;    // bytes between a tile's consecutive blocks
    const auto stage = [&](int64_t b, uint8_t* dst) {
      avx512vnni::prefetch_ahead(group + b * W::kBlockBytes, W::kBlockBytes);
      W::stage(group + b * W::kCodeBytes, dst);
    };
    const auto acts = [&](int64_t b) { return tile_acts + b * kBlockActs; };
    ChunkBuffers buf;
    for (int64_t b0 = b_first; b0 < nb; b0 += kBatch) {
      const int n = static_cast<int>(std::min<int64_t>(kBatch, nb - b0));
      run_batch<W::kSigned>(buf, b0, n, kQK, stage, acts);
      for (int i = 0; i < n; ++i) {
        const int64_t b = b0 + i;
        fold(a, slot0 + b * kActTileTokens, headers + b * W::kHeaderBytes, buf.c[i], row0, sum);
      }
    }
  }

  template <int NT>
  static void products(const GemmTile& t, const uint8_t* group, __m512 (&acc)[NT]) {
    ensure_tile_config();
    for (int j = 0; j < NT; ++j) acc[j] = _mm512_setzero_ps();
    batched<NT>(t, group, 0, acc);
  }
};

// Token tiles [t.t0 + 16 k, ...) of a call, as calls of at most kActTileTokens.
GemmTile token_tile(const GemmTile& t, int k) {
  GemmTile s = t;
  s.t0 = t.t0 + int64_t{kActTileTokens} * k;
  s.y = t.y + int64_t{kActTileTokens} * k * t.ldy;
  s.nt = std::min(kActTileTokens, t.nt - kActTileTokens * k);
  return s;
}

// Tokens per call of the multi-tile kernels: every whole token tile of a call
// reuses its group's staged B tiles.
constexpr int kMultiTileTokens = 64;

// The gemm kernel of products P for up to kMultiTileTokens tokens (t.t0 a
// multiple of kActTileTokens): whole token tiles run tile16 on B tiles staged
// once per call, a last partial one the single-tile kernel.
template <class P, GemmTileFn Vnni>
void gemm_tiles(const GemmTile& t) {
  const int whole = t.nt / kActTileTokens;
  if (whole > 0) {
    ensure_tile_config();
    uint8_t* staged = staging_buffer(0, t.cols / kQK * 512);
    P::stage_steps(t.w, t.cols / kQK, staged);
    for (int k = 0; k < whole; ++k) {
      const GemmTile s = token_tile(t, k);
      __m512 acc[16];
      P::tile16(s, s.w, staged, acc);
      avx512vnni::store_tile(s, acc);
    }
  }
  if (t.nt % kActTileTokens) gemm_or_vnni<P, Vnni>(token_tile(t, whole));
}

// The fused gate kernel likewise (avx512vnni::swiglu_in_place).
template <class P, GemmSwigluTileFn VnniSwiglu>
void swiglu_tiles(const GemmTile& t, const uint8_t* up) {
  const int whole = t.nt / kActTileTokens;
  if (whole > 0) {
    ensure_tile_config();
    const int64_t bytes = t.cols / kQK * 512;
    uint8_t* gate_b = staging_buffer(0, bytes);
    uint8_t* up_b = staging_buffer(1, bytes);
    P::stage_steps(t.w, t.cols / kQK, gate_b);
    P::stage_steps(up, t.cols / kQK, up_b);
    for (int k = 0; k < whole; ++k) {
      const GemmTile s = token_tile(t, k);
      __m512 gate[16], u[16];
      P::tile16(s, s.w, gate_b, gate);
      P::tile16(s, up, up_b, u);
      avx512vnni::swiglu_in_place(gate, u);
      avx512vnni::store_tile(s, gate);
    }
  }
  if (t.nt % kActTileTokens) swiglu_or_vnni<P, VnniSwiglu>(token_tile(t, whole), up);
}

template <class P, GemmTileFn Vnni, GemmSwigluTileFn VnniSwiglu>
constexpr PanelKernels multi_tile_kernels() {
  return {gemm_tiles<P, Vnni>, swiglu_tiles<P, VnniSwiglu>, kMultiTileTokens};
}

}  // namespace

void panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  out[0] = multi_tile_kernels<Block32Products<Q4_0Format>, avx512vnni::panel_q4_0, avx512vnni::panel_swiglu_q4_0>();
  out[1] = multi_tile_kernels<Block32Products<Q4_1Format>, avx512vnni::panel_q4_1, avx512vnni::panel_swiglu_q4_1>();
  out[2] = multi_tile_kernels<Block32Products<Q8_0Format>, avx512vnni::panel_q8_0, avx512vnni::panel_swiglu_q8_0>();
  out[6] = multi_tile_kernels<Block32Products<Q5_0Format>, avx512vnni::panel_q5_0, avx512vnni::panel_swiglu_q5_0>();
  out[7] = multi_tile_kernels<Block32Products<Q5_1Format>, avx512vnni::panel_q5_1, avx512vnni::panel_swiglu_q5_1>();
  k_panel_kernels(out);
}

}  // namespace db::kernels::amx
#endif

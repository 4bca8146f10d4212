// The unit of work of the CPU matmul: one tile of up to tile_rows weight rows x
// tile_tokens tokens, computed by an ISA-specific kernel. The driver
// (cpu/matmul.cpp) walks the tiles and the threads.
//
// Plain data and declarations only (no inline code): ISA-specific files include
// this header. Value-initialize the structs ({}).
#pragma once
#include <cstdint>

#include "kernels/cpu/act_quant.h"
#include "tensor/dtype.h"

namespace db::kernels {

struct GemmTile {
  const uint8_t* w;              // first byte of the tile's first weight row
  int64_t w_stride;                    // bytes between consecutive weight rows
  int64_t cols;                        // elements per weight row
  const QuantizedActs* acts;     // quantized weights: activations quantized for this dtype
  const float* x;                // float weights: token rows of `cols` floats; float panels: token t0's
                                 // element 0, element k at x + k * x_kstride and token t0 + j's at + j
  int64_t x_kstride;                   // float panels: floats between a token's consecutive elements
  int64_t k0, k1;                      // float panels: the elements [k0, k1) this call adds (see panels.h)
  int64_t t0;                          // first token of the tile
  float* y;                      // output of (first row, token t0)
  int64_t ldy;                         // floats between consecutive tokens in y
  int nr;                              // rows in this tile, 1..tile_rows
  int nt;                              // tokens in this tile, 1..tile_tokens
};

// Writes y[t * ldy + r] = dot(weight row r, token t0 + t) for r < nr, t < nt.
using GemmTileFn = void (*)(const GemmTile& tile);

// The feed-forward gate on one tile: with tile.w the gate weights and `up` the
// up weights at the same place, writes y = silu(gate . x) * (up . x) — bit for
// bit what the tile kernel run on each followed by swiglu() gives.
using GemmSwigluTileFn = void (*)(const GemmTile& tile, const uint8_t* up);

// Writes a Panels16 group's weights (its `cols` elements of 16 rows) into
// `out` in a kernel's expanded form (a layout private to that kernel).
using PanelExpandFn = void (*)(const uint8_t* group, int64_t cols, uint8_t* out);

// The kernels of one Panels16 format (kernels/cpu/panels.h).
struct PanelKernels {
  GemmTileFn gemm;
  GemmSwigluTileFn swiglu;  // null: no fused gate
  int max_tokens = 0;       // largest nt per call: 0 = kPanelTileTokens, else a multiple of it (t0 then
                            // a multiple of max_tokens)
  // Optional, for groups that several token tiles pass over: `expand` unpacks
  // a group once (expanded_block_bytes per block of the format), and
  // `expanded` is `gemm` reading GemmTile.w as that expanded group, with the
  // same results bit for bit; `expanded_swiglu` is `swiglu` reading both the
  // gate (GemmTile.w) and `up` expanded.
  PanelExpandFn expand = nullptr;
  GemmTileFn expanded = nullptr;
  int64_t expanded_block_bytes = 0;
  GemmSwigluTileFn expanded_swiglu = nullptr;
};

// The weight types the CPU matmul computes, in the order of GemmKernels::types.
inline constexpr DType kGemmDTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q4_K,
                                        DType::Q5_K, DType::Q6_K, DType::Q5_0, DType::Q5_1,
                                        DType::F32,  DType::F16,  DType::BF16};
inline constexpr int kGemmTypes = sizeof(kGemmDTypes) / sizeof(kGemmDTypes[0]);

// The kernels of one weight type at one ISA level (null = none at this level).
struct WeightKernels {
  GemmTileFn rows;     // TensorLayout::Rows
  PanelKernels panel;  // TensorLayout::Panels16 (kernels/cpu/panels.h)
};

// Kernels of one ISA level (built in gemm_tables.cpp): a row per weight type.
struct GemmKernels {
  WeightKernels types[kGemmTypes];  // indexed by gemm_type_index(dtype)
  int tile_rows;    // largest nr the kernels accept
  int tile_tokens;  // largest nt the kernels accept (the panel kernels: kPanelTileTokens)
  QuantizeRowQ8x32Fn quantize_q8x32;
  QuantizeRowQ8x256Fn quantize_q8x256;
};

// Index of t in kGemmDTypes, or -1 if the matmul does not compute t.
int gemm_type_index(DType t);
// The row of t in k, or null if the matmul does not compute t.
const WeightKernels* weight_kernels(const GemmKernels& k, DType t);

// Tile sizes per level (the driver and the kernels agree on these).
inline constexpr int kScalarTileRows = 4, kScalarTileTokens = 4;
inline constexpr int kAvx2TileRows = 4, kAvx2TileTokens = 2;
inline constexpr int kAvx512TileRows = 4, kAvx512TileTokens = 4;

namespace scalar {
void gemm_f32(const GemmTile&);
void gemm_f16(const GemmTile&);
void gemm_bf16(const GemmTile&);
void gemm_q4_0(const GemmTile&);
void gemm_q4_1(const GemmTile&);
void gemm_q5_0(const GemmTile&);
void gemm_q5_1(const GemmTile&);
void gemm_q8_0(const GemmTile&);
void gemm_q4_k(const GemmTile&);
void gemm_q5_k(const GemmTile&);
void gemm_q6_k(const GemmTile&);
}  // namespace scalar

namespace avx2 {
void gemm_f32(const GemmTile&);
void gemm_f16(const GemmTile&);
void gemm_bf16(const GemmTile&);
void gemm_q4_0(const GemmTile&);
void gemm_q4_1(const GemmTile&);
void gemm_q5_0(const GemmTile&);
void gemm_q5_1(const GemmTile&);
void gemm_q8_0(const GemmTile&);
void gemm_q4_k(const GemmTile&);
void gemm_q5_k(const GemmTile&);
void gemm_q6_k(const GemmTile&);
}  // namespace avx2

namespace avx512 {
void gemm_f32(const GemmTile&);
void gemm_f16(const GemmTile&);
void gemm_bf16(const GemmTile&);
void gemm_q4_0(const GemmTile&);
void gemm_q4_1(const GemmTile&);
void gemm_q5_0(const GemmTile&);
void gemm_q5_1(const GemmTile&);
void gemm_q8_0(const GemmTile&);
void gemm_q4_k(const GemmTile&);
void gemm_q5_k(const GemmTile&);
void gemm_q6_k(const GemmTile&);
}  // namespace avx512

namespace avx512vnni {
void gemm_q4_0(const GemmTile&);
void gemm_q4_1(const GemmTile&);
void gemm_q5_0(const GemmTile&);
void gemm_q5_1(const GemmTile&);
void gemm_q8_0(const GemmTile&);
void gemm_q4_k(const GemmTile&);
void gemm_q5_k(const GemmTile&);
void gemm_q6_k(const GemmTile&);
}  // namespace avx512vnni

}  // namespace db::kernels

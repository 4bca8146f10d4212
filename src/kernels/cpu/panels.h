// The Panels16 weight layout (TensorLayout::Panels16) for 32-element block
// formats (Q4_0, Q4_1, Q8_0), and its kernels.
//
// Rows are taken 16 at a time (a group; the last group is padded with zero
// rows). Group g occupies panel_group_bytes(dtype, cols) bytes from
// g * that stride, and holds, for its nb = cols / 32 blocks:
//   codes   [nb][code_bytes]   then   headers [nb][header_bytes]
// Block b's codes are the unsigned weight codes of the 16 rows in the order of
// an integer dot product over 16 lanes: byte ((k / 4) * 16 + r) * 4 + k % 4 is
// row r's code of element k (for 4-bit codes, element k < 16 sits in that
// byte's low nibble and element k + 16 in the high nibble of the same byte
// index). Q8_0 codes are stored as q + 128.
// Headers: 16 fp16 scales d (row order), then for Q4_1 16 fp16 offsets m.
//
// Every kernel computes, per (row, token), from acc = 0 and block by block:
//   dot = sum_k code[k] * a[k] - zero_point * isum       (exact, in integers)
//   Q4_0, Q8_0: acc = fma(float(dot), d * da, acc)
//   Q4_1:       acc = fma(m, ds, acc); acc = fma(float(dot), d * da, acc)
// with the token's block scale da, ds = da * isum and isum = sum of its codes
// (QuantizedActs), zero_point 8 (Q4_0), 128 (Q8_0) or 0 (Q4_1). The same
// float operations in the same order at every ISA level and tile shape, so
// results are bit-identical across levels, tiles, threads and batches.
#pragma once
#include <cstdint>

#include "kernels/cpu/gemm_tile.h"
#include "tensor/dtype.h"

namespace db::kernels {

inline constexpr int kPanelRows = 16;

// True for the dtypes the panel layout exists for.
bool has_panel_layout(DType t);
// Bytes of one block's codes / headers for 16 rows.
int64_t panel_code_bytes(DType t);
int64_t panel_header_bytes(DType t);
// Bytes between consecutive groups (a multiple of 64).
int64_t panel_group_bytes(DType t, int64_t cols);
// Bytes of a whole {rows, cols} matrix in panel layout.
int64_t panel_matrix_bytes(DType t, int64_t rows, int64_t cols);

// Byte offset, inside a block's codes, of row r's element k (k < 32 for 8-bit
// codes, k < 16 for 4-bit codes: element k + 16 is the same byte's high nibble).
int64_t panel_code_offset(int r, int k);

// Writes rows [0, rows) of a Rows-layout matrix (row stride src_stride bytes)
// into dst (panel_matrix_bytes of them) in panel layout.
void pack_panels(DType t, const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst);
// Writes row r of a panel matrix into dst as Rows-layout (GGUF) blocks.
void unpack_panel_row(DType t, const uint8_t* panels, int64_t cols, int64_t r, uint8_t* dst);

// Panel kernels (GemmKernels::panel_*): GemmTile.w is the group's first byte,
// nr <= 16 rows of it, nt <= kPanelTileTokens tokens; w_stride is unused.
inline constexpr int kPanelTileTokens = 8;

namespace scalar {
void panel_q4_0(const GemmTile&);
void panel_q4_1(const GemmTile&);
void panel_q8_0(const GemmTile&);
}  // namespace scalar
namespace avx512vnni {
void panel_q4_0(const GemmTile&);
void panel_q4_1(const GemmTile&);
void panel_q8_0(const GemmTile&);
void panel_swiglu_q4_0(const GemmTile&, const uint8_t* up);
void panel_swiglu_q4_1(const GemmTile&, const uint8_t* up);
void panel_swiglu_q8_0(const GemmTile&, const uint8_t* up);
}  // namespace avx512vnni

}  // namespace db::kernels

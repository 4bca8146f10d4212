// The sizes of the Panels16 weight layout (TensorLayout::Panels16): how many
// bytes a matrix takes once repacked for the matmul kernels. The byte order
// inside a group is the kernels' business (kernels/cpu/panels.h); its sizes are
// here so that a file reader can bound a pre-packed tensor (io/gguf.h) without
// knowing the kernels.
//
// Rows are taken 16 at a time (a group; the last group is padded with zero
// rows). A group holds, for its cols / panel_block_elems(t) blocks, the codes of
// each block (panel_code_bytes) then the headers of each block
// (panel_header_bytes), padded to a multiple of 64 bytes. A tensor of more than
// two dimensions in this layout is its outer matrices one after another, each
// {rows, cols} matrix in panel_matrix_bytes.
#pragma once
#include <cstdint>

#include "tensor/dtype.h"

namespace db {

// The version of the byte layout; a file packed with another version is refused
// (io/gguf.h). Bump it whenever the bytes a kernel reads change meaning.
inline constexpr uint32_t kPanelLayoutVersion = 1;

inline constexpr int kPanelRows = 16;

constexpr bool is_k_quant(DType t) { return t == DType::Q4_K || t == DType::Q5_K || t == DType::Q6_K; }
constexpr bool is_float_panel(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// True for the dtypes the panel layout exists for.
constexpr bool has_panel_layout(DType t) {
  switch (t) {
    case DType::Q4_0: case DType::Q4_1: case DType::Q5_0: case DType::Q5_1: case DType::Q8_0:
    case DType::Q4_K: case DType::Q5_K: case DType::Q6_K:
    case DType::F32: case DType::F16: case DType::BF16:
      return true;
    default:
      return false;
  }
}

// Elements per block (32, 256 for K-quants, 1 for floats).
constexpr int64_t panel_block_elems(DType t) { return is_k_quant(t) ? 256 : is_float_panel(t) ? 1 : 32; }

// Bytes of one block's codes for 16 rows. K-quants: 2048 bytes of low nibbles,
// the high bits (Q5_K 512, Q6_K 1024), 256 bytes of sub-block scales. Q5_0 /
// Q5_1: 256 bytes of low nibbles and a 64-byte fifth-bit register.
constexpr int64_t panel_code_bytes(DType t) {
  if (is_k_quant(t)) return 2048 + (t == DType::Q6_K ? 1024 : t == DType::Q5_K ? 512 : 0) + 256;
  if (is_float_panel(t)) return kPanelRows * (t == DType::F32 ? 4 : 2);
  if (t == DType::Q5_0 || t == DType::Q5_1) return 256 + 4 * kPanelRows;
  return t == DType::Q8_0 ? 32 * kPanelRows : 16 * kPanelRows;
}

// Bytes of one block's headers for 16 rows: 16 fp16 scales, and 16 fp16
// offsets for the formats that have them; none for floats.
constexpr int64_t panel_header_bytes(DType t) {
  if (is_float_panel(t)) return 0;
  const bool has_offsets = t == DType::Q4_1 || t == DType::Q5_1 || t == DType::Q4_K || t == DType::Q5_K;
  return (has_offsets ? 2 : 1) * 2 * kPanelRows;
}

// Bytes between consecutive groups (a multiple of 64).
constexpr int64_t panel_group_bytes(DType t, int64_t cols) {
  const int64_t bytes = cols / panel_block_elems(t) * (panel_code_bytes(t) + panel_header_bytes(t));
  return (bytes + 63) / 64 * 64;
}

// Bytes of a whole {rows, cols} matrix in panel layout.
constexpr int64_t panel_matrix_bytes(DType t, int64_t rows, int64_t cols) {
  return (rows + kPanelRows - 1) / kPanelRows * panel_group_bytes(t, cols);
}

}  // namespace db

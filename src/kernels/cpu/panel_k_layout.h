// Where each part of a K-quant super-block (Q4_K, Q5_K, Q6_K: 256 elements)
// lies inside its Panels16 codes (the layout: kernels/cpu/panels.h). For the
// 16 rows of a group, a super-block's codes are, in order:
//   low 4 bits   2048 bytes  chunk c (elements 32c..32c+31) at 256 c, in the
//                            4-bit chunk order of panel_code_offset
//   high bits    Q5_K: 512 bytes, one 64-byte register per chunk: bit i of
//                lane r, byte e is the fifth bit of element 4i + e;
//                Q6_K: 1024 bytes, two registers per chunk (elements k < 16,
//                then k >= 16): bits 2(i % 4).. of lane r, byte e hold the two
//                high bits of element 4i + e;  Q4_K: none
//   scales       256 bytes.  Q6_K: the signed scale of sub-block g (16
//                elements) for row r at 32 (g / 2) + 2 r + g % 2 (the scales
//                of two sub-blocks interleaved per row);
//                Q4_K / Q5_K: the 6-bit scale of sub-block s (32 elements)
//                for row r at 16 s + r, its 6-bit min at 128 + 16 s + r.
// The vector kernels read these regions as whole registers; the functions
// below give the byte of one (row, element) for the packer and the scalar
// reference.
#pragma once
#include <cstdint>

#include "tensor/dtype.h"

namespace db::kernels {

inline constexpr int64_t kKLowBytes = 2048;
inline constexpr int64_t kKScaleBytes = 256;

// The regions of a K-quant format's super-block as constants, for the vector
// kernels: the scale region's offset, the codes' and the header's sizes, and
// a super-block's slice of its group's bytes (codes and header: the unit the
// kernels prefetch by, in eighths).
template <DType T>
struct KFormat {
  static constexpr int64_t kHighBytes = T == DType::Q6_K ? 1024 : T == DType::Q5_K ? 512 : 0;
  static constexpr int64_t kScales = kKLowBytes + kHighBytes;  // offset of the scale region
  static constexpr int64_t kCodeBytes = kScales + kKScaleBytes;
  static constexpr int64_t kHeaderBytes = T == DType::Q6_K ? 32 : 64;
  static constexpr int64_t kBlockBytes = kCodeBytes + kHeaderBytes;
  static_assert(kBlockBytes % 8 == 0);
};

// Bytes of the high-bit region (0, 512 or 1024).
int64_t k_high_bytes(DType t);

// Row r's element e of a super-block: its low 4 bits are
// (codes[low] >> low_shift) & 15, its high bits (codes[high] >> high_shift)
// masked to 1 (Q5_K) or 2 (Q6_K) bits and worth 16 each (Q4_K: none).
struct KCodeSlot {
  int64_t low;
  int low_shift;
  int64_t high;
  int high_shift;
};
KCodeSlot k_code_slot(DType t, int r, int e);

// Row r's code of element e (0..63 for Q6_K, 0..31 for Q5_K, 0..15 for Q4_K).
int k_code(DType t, const uint8_t* codes, int r, int e);

// Byte of row r's scale of sub-block s (Q6_K: s < 16, signed; Q4_K / Q5_K: s < 8)
// and of its min (Q4_K / Q5_K).
int64_t k_scale_offset(DType t, int r, int s);
int64_t k_min_offset(DType t, int r, int s);

}  // namespace db::kernels

// Conversion between GGUF rows and the Panels16 layout (kernels/cpu/panels.h;
// the K-quant blocks: panel_pack_k.cpp).
#include <algorithm>
#include <cstring>

#include "kernels/cpu/panel_k_layout.h"
#include "kernels/cpu/panel_pack_blocks.h"
#include "kernels/cpu/panels.h"
#include "kernels/quant_blocks.h"
#include "util/error.h"

namespace db::kernels {

namespace {

constexpr int64_t kHeaderHalfBytes = 2 * kPanelRows;  // 16 fp16 values

// Copies the fp16 field at `field` of row r's block into header slot r of `half_array`.
void put_half(uint8_t* half_array, int r, const uint8_t* field) { std::memcpy(half_array + 2 * r, field, 2); }

// Row r's fifth bits of a Q5_0 / Q5_1 block (bit k of qh: element k) into its
// bytes of the chunk's fifth-bit register, and back (panels.h).
void put_fifth_bits(uint8_t* codes, int r, const uint8_t* qh) {
  const uint32_t bits = load_qh(qh);
  for (int e = 0; e < 4; ++e) {
    uint8_t byte = 0;
    for (int i = 0; i < 8; ++i) byte = static_cast<uint8_t>(byte | ((bits >> (4 * i + e)) & 1u) << i);
    codes[kPanelFifthBits + panel_fifth_bit_byte(r, e)] = byte;
  }
}

void get_fifth_bits(const uint8_t* codes, int r, uint8_t* qh) {
  uint32_t bits = 0;
  for (int k = 0; k < kQK; ++k)
    bits |= static_cast<uint32_t>((codes[kPanelFifthBits + panel_fifth_bit_byte(r, k)] >> (k / 4)) & 1) << k;
  std::memcpy(qh, &bits, sizeof bits);
}

// The 32-element formats with 4-bit or 5-bit codes: row r's block into its
// group's codes and headers (d, then m for the formats with offsets), and back.
template <class Block>
void pack_block32(const Block& b, int r, uint8_t* codes, uint8_t* header) {
  put_half(header, r, b.d);
  if constexpr (requires { b.m; }) put_half(header + kHeaderHalfBytes, r, b.m);
  put_chunk_codes(codes, r, b.qs, 16);
  if constexpr (requires { b.qh; }) put_fifth_bits(codes, r, b.qh);
}

template <class Block>
void unpack_block32(const uint8_t* codes, const uint8_t* header, int r, Block& b) {
  std::memcpy(b.d, header + 2 * r, 2);
  if constexpr (requires { b.m; }) std::memcpy(b.m, header + kHeaderHalfBytes + 2 * r, 2);
  for (int k = 0; k < 16; ++k) b.qs[k] = codes[panel_code_offset(r, k)];
  if constexpr (requires { b.qh; }) get_fifth_bits(codes, r, b.qh);
}

void pack_block(DType t, const uint8_t* block, int r, uint8_t* codes, uint8_t* header) {
  switch (t) {
    case DType::Q4_0: pack_block32(*reinterpret_cast<const BlockQ4_0*>(block), r, codes, header); break;
    case DType::Q4_1: pack_block32(*reinterpret_cast<const BlockQ4_1*>(block), r, codes, header); break;
    case DType::Q5_0: pack_block32(*reinterpret_cast<const BlockQ5_0*>(block), r, codes, header); break;
    case DType::Q5_1: pack_block32(*reinterpret_cast<const BlockQ5_1*>(block), r, codes, header); break;
    case DType::Q8_0: {
      const auto* b = reinterpret_cast<const BlockQ8_0*>(block);
      put_half(header, r, b->d);
      uint8_t biased[32];
      for (int k = 0; k < 32; ++k) biased[k] = static_cast<uint8_t>(b->qs[k] + 128);
      put_chunk_codes(codes, r, biased, 32);
      break;
    }
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: pack_block_k(t, block, r, codes, header); break;
    default: DB_CHECK(false, "no panel layout for " + dtype_name(t));
  }
}

void unpack_block(DType t, const uint8_t* codes, const uint8_t* header, int r, uint8_t* block) {
  switch (t) {
    case DType::Q4_0: unpack_block32(codes, header, r, *reinterpret_cast<BlockQ4_0*>(block)); break;
    case DType::Q4_1: unpack_block32(codes, header, r, *reinterpret_cast<BlockQ4_1*>(block)); break;
    case DType::Q5_0: unpack_block32(codes, header, r, *reinterpret_cast<BlockQ5_0*>(block)); break;
    case DType::Q5_1: unpack_block32(codes, header, r, *reinterpret_cast<BlockQ5_1*>(block)); break;
    case DType::Q8_0: {
      auto* b = reinterpret_cast<BlockQ8_0*>(block);
      std::memcpy(b->d, header + 2 * r, 2);
      for (int k = 0; k < 32; ++k) b->qs[k] = static_cast<int8_t>(codes[panel_code_offset(r, k)] - 128);
      break;
    }
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: unpack_block_k(t, codes, header, r, block); break;
    default: DB_CHECK(false, "no panel layout for " + dtype_name(t));
  }
}

// Float rows [0, rows) into groups: element k of a group's 16 rows is 16
// consecutive values (padding rows stay zero). A group is written 64
// elements at a time, so that the lines being filled stay in L1.
void pack_float_panels(DType t, const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst) {
  const auto es = static_cast<int64_t>(block_bytes(t));
  const int64_t group_bytes = panel_group_bytes(t, cols);
  constexpr int64_t kStep = 64;
  for (int64_t r0 = 0; r0 < rows; r0 += kPanelRows) {
    uint8_t* group = dst + r0 / kPanelRows * group_bytes;
    const int64_t nr = std::min<int64_t>(kPanelRows, rows - r0);
    for (int64_t k0 = 0; k0 < cols; k0 += kStep) {
      const int64_t k1 = std::min(cols, k0 + kStep);
      for (int64_t r = 0; r < nr; ++r) {
        const uint8_t* s = src + (r0 + r) * src_stride;
        uint8_t* d = group + r * es;
        if (es == 4)
          for (int64_t k = k0; k < k1; ++k) std::memcpy(d + k * kPanelRows * 4, s + 4 * k, 4);
        else
          for (int64_t k = k0; k < k1; ++k) std::memcpy(d + k * kPanelRows * 2, s + 2 * k, 2);
      }
    }
  }
}

}  // namespace

void put_chunk_codes(uint8_t* chunk, int r, const uint8_t* bytes, int n) {
  for (int k = 0; k < n; k += 4) std::memcpy(chunk + panel_code_offset(r, k), bytes + k, 4);
}

int panel_index(DType t) {
  for (int i = 0; i < kPanelFormats; ++i)
    if (kPanelDTypes[i] == t) return i;
  return -1;
}

// The sizes of tensor/panel_layout.h, checked against this layout's regions.
static_assert(panel_code_bytes(DType::Q5_K) == kKLowBytes + 512 + kKScaleBytes);
static_assert(panel_code_bytes(DType::Q6_K) == kKLowBytes + 1024 + kKScaleBytes);
static_assert(panel_code_bytes(DType::Q5_0) == kPanelFifthBits + 4 * kPanelRows);
static_assert(panel_header_bytes(DType::Q4_1) == 2 * kHeaderHalfBytes);
static_assert(panel_block_elems(DType::Q8_0) == kQK);

void pack_panels(DType t, const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst) {
  DB_CHECK(has_panel_layout(t), "no panel layout for " + dtype_name(t));
  const int64_t nb = cols / panel_block_elems(t), block = static_cast<int64_t>(block_bytes(t));
  const int64_t code_bytes = panel_code_bytes(t), header_bytes = panel_header_bytes(t);
  const int64_t group_bytes = panel_group_bytes(t, cols);
  std::memset(dst, 0, static_cast<size_t>(panel_matrix_bytes(t, rows, cols)));  // padding rows: zero codes and scales
  if (is_float_panel(t)) return pack_float_panels(t, src, src_stride, rows, cols, dst);
  for (int64_t row = 0; row < rows; ++row) {
    uint8_t* group = dst + row / kPanelRows * group_bytes;
    const int r = static_cast<int>(row % kPanelRows);
    for (int64_t b = 0; b < nb; ++b)
      pack_block(t, src + row * src_stride + b * block, r, group + b * code_bytes,
                 group + nb * code_bytes + b * header_bytes);
  }
}

void unpack_panel_row(DType t, const uint8_t* panels, int64_t cols, int64_t row, uint8_t* dst) {
  DB_CHECK(has_panel_layout(t), "no panel layout for " + dtype_name(t));
  const int64_t nb = cols / panel_block_elems(t), block = static_cast<int64_t>(block_bytes(t));
  const int64_t code_bytes = panel_code_bytes(t), header_bytes = panel_header_bytes(t);
  const uint8_t* group = panels + row / kPanelRows * panel_group_bytes(t, cols);
  const int r = static_cast<int>(row % kPanelRows);
  if (is_float_panel(t)) {
    for (int64_t k = 0; k < cols; ++k) std::memcpy(dst + k * block, group + (k * kPanelRows + r) * block, block);
    return;
  }
  for (int64_t b = 0; b < nb; ++b)
    unpack_block(t, group + b * code_bytes, group + nb * code_bytes + b * header_bytes, r, dst + b * block);
}

}  // namespace db::kernels

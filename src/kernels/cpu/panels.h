// The Panels16 weight layout (TensorLayout::Panels16) and its kernels, for
// the 32-element block formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), the 256-element K-quant
// super-blocks (Q4_K, Q5_K, Q6_K) and the float formats (F32, F16, BF16).
//
// Rows are taken 16 at a time (a group; the last group is padded with zero
// rows). Group g occupies panel_group_bytes(dtype, cols) bytes from
// g * that stride, and holds, for its nb = cols / panel_block_elems(dtype) blocks:
//   codes   [nb][panel_code_bytes]   then   headers [nb][panel_header_bytes]
// Codes are unsigned and laid out for an integer dot product over 16 lanes:
// byte ((k / 4) * 16 + r) * 4 + k % 4 of a 32-element chunk holds row r's code
// of element k (panel_code_offset). For 4-bit codes element k < 16 sits in that
// byte's low nibble and element k + 16 in the high nibble of the same byte, so
// a chunk is 256 bytes (512 for Q8_0, whose codes are stored as q + 128).
//
// 32-element formats: a block is one chunk. Q5_0 / Q5_1 codes: the chunk of
// their low 4 bits (256 bytes), then their fifth bits in one 64-byte register
// (320 bytes in all): bit i of byte 4r + e is the fifth bit of row r's element
// 4i + e (the Q5_K high-bit register of panel_k_layout.h). Headers: 16 fp16
// scales d (row order), then for Q4_1 / Q5_1 16 fp16 offsets m.
// K-quants: a super-block's codes are its 8 chunks' low 4 bits (2048 bytes),
// then the high bits, then the sub-block scales (see panel_k_layout.h for the
// exact offsets). Headers: 16 fp16 d, then for Q4_K / Q5_K 16 fp16 dmin.
//
// Every kernel computes, per (row, token), from acc = 0 and block by block,
// with the token's block scale da:
//   Q4_0, Q5_0, Q8_0:  dot = sum_k code[k] * a[k] + (zp / 8) * zsum   (zp 8 / 16 / 128)
//                      acc = fma(float(dot), d * da, acc)
//   Q4_1, Q5_1:  acc = fma(m, ds, acc); acc = fma(float(dot), d * da, acc)   (zp 0)
//   Q4_K, Q5_K:  M = sum_sb mn[sb] * bsum32(sb)   f = float(M) * -dmin
//                for sb = 0..7: f = fma(float(dot(sb)), d * float(sc[sb]), f)
//                acc = fma(f, da, acc)
//   Q6_K:        f = 0; for g = 0..15: f = fma(float(dot(g) + zsum16(g)), d * float(sc[g]), f)
//                acc = fma(f, da, acc)
// with zsum = -8 * isum and ds = da * isum from the token's per-block code sums
// isum (Q8x32), and from its Q8x256 sums per 16 / 32 elements bsum16 / bsum32,
// zsum16 = -32 * bsum16; all integer sums exact. The K-quant sub-block scales
// multiply in float (d * sc is exact), so each sub-block costs a token one
// convert and one FMA rather than an integer multiply and add.
// The same float operations in the same order at every ISA level and
// tile shape, so results are bit-identical across levels, tiles, threads and
// batches.
//
// Float formats: a block is one element, with no header; element k of the 16
// rows is 16 values in row order at k * 16 * element size. A kernel call adds
// elements [k0, k1) of each row:
//   acc = k0 == 0 ? 0 : y;   for k = k0..k1-1: acc = fma(w[k], x[k], acc);   y = acc
// one fused multiply-add per element in element order, so a product cut into
// any element ranges (the driver cuts them to keep weights in L1) gives the
// same bits as one call over the whole row. x is the token's f32 values
// (GemmTile.x, x_kstride); F16 and BF16 weights convert to f32 exactly.
#pragma once
#include <cstdint>

#include "kernels/cpu/gemm_tile.h"
#include "tensor/dtype.h"
#include "tensor/panel_layout.h"  // kPanelRows and the sizes: panel_group_bytes, ...

namespace db::kernels {

// The panel formats, in the order of the panel_kernels() arrays below.
inline constexpr DType kPanelDTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q4_K,
                                         DType::Q5_K, DType::Q6_K, DType::Q5_0, DType::Q5_1,
                                         DType::F32,  DType::F16,  DType::BF16};
inline constexpr int kPanelFormats = 11;
inline constexpr int kFirstFloatPanel = 8;  // F32, F16, BF16 follow the quantized formats
// Index of t in kPanelDTypes, or -1 if t has no panel layout.
int panel_index(DType t);

// Byte offset, inside a 32-element chunk's codes, of row r's element k (k < 32
// for 8-bit codes, k < 16 for 4-bit codes: element k + 16 is the same byte's
// high nibble).
inline int64_t panel_code_offset(int r, int k) { return ((k / 4) * kPanelRows + r) * 4 + k % 4; }
// Q5_0 / Q5_1: the offset of the fifth-bit register in a block's codes, and
// where row r's element k (k < 32) has its fifth bit: bit k / 4 of byte
// kPanelFifthBits + panel_fifth_bit_byte(r, k).
inline constexpr int64_t kPanelFifthBits = 256;
inline int64_t panel_fifth_bit_byte(int r, int k) { return 4 * r + k % 4; }

// Writes rows [0, rows) of a Rows-layout matrix (row stride src_stride bytes)
// into dst (panel_matrix_bytes of them) in panel layout.
void pack_panels(DType t, const uint8_t* src, int64_t src_stride, int64_t rows, int64_t cols, uint8_t* dst);
// Writes row r of a panel matrix into dst as Rows-layout (GGUF) blocks.
void unpack_panel_row(DType t, const uint8_t* panels, int64_t cols, int64_t r, uint8_t* dst);

// Panel kernels (WeightKernels::panel): GemmTile.w is the group's first byte,
// nr <= 16 rows of it, nt <= kPanelTileTokens tokens; w_stride is unused. The
// quantized formats' activations are in the Tiles layout
// (kernels/cpu/act_quant.h), and a tile's tokens lie in one activation tile
// (t0 % kActTileTokens + nt <= kActTileTokens). The float formats read
// GemmTile.x / x_kstride / k0 / k1 (above).
inline constexpr int kPanelTileTokens = 16;

namespace scalar {
void panel_q4_0(const GemmTile&);
void panel_q4_1(const GemmTile&);
void panel_q5_0(const GemmTile&);
void panel_q5_1(const GemmTile&);
void panel_q8_0(const GemmTile&);
void panel_q4_k(const GemmTile&);
void panel_q5_k(const GemmTile&);
void panel_q6_k(const GemmTile&);
void panel_f32(const GemmTile&);
void panel_f16(const GemmTile&);
void panel_bf16(const GemmTile&);
// Kernels for every panel format, in kPanelDTypes order (no fused gates).
void panel_kernels(PanelKernels (&out)[kPanelFormats]);
}  // namespace scalar
// The AVX2 panel kernels, built twice (kernels/cpu/x86/panel_avx2.h): avx2
// with vpmaddubsw, avx2vnni with AVX-VNNI's vpdpbusd. Each panel_kernels() sets
// the quantized formats' entries of out (before kFirstFloatPanel), with fused
// gates, and leaves the others.
namespace avx2 {
void panel_q4_0(const GemmTile&);
void panel_q4_1(const GemmTile&);
void panel_q5_0(const GemmTile&);
void panel_q5_1(const GemmTile&);
void panel_q8_0(const GemmTile&);
void panel_q4_k(const GemmTile&);
void panel_q5_k(const GemmTile&);
void panel_q6_k(const GemmTile&);
void panel_kernels(PanelKernels (&out)[kPanelFormats]);
}  // namespace avx2
namespace avx2vnni {
void panel_q4_0(const GemmTile&);
void panel_q4_1(const GemmTile&);
void panel_q5_0(const GemmTile&);
void panel_q5_1(const GemmTile&);
void panel_q8_0(const GemmTile&);
void panel_q4_k(const GemmTile&);
void panel_q5_k(const GemmTile&);
void panel_q6_k(const GemmTile&);
void panel_kernels(PanelKernels (&out)[kPanelFormats]);
}  // namespace avx2vnni
namespace avx512 {
void panel_f32(const GemmTile&);
void panel_f16(const GemmTile&);
void panel_bf16(const GemmTile&);
// Sets the float formats' entries of out (kFirstFloatPanel on); leaves the others.
void float_panel_kernels(PanelKernels (&out)[kPanelFormats]);
}  // namespace avx512
namespace avx512vnni {
void panel_q4_0(const GemmTile&);
void panel_q4_1(const GemmTile&);
void panel_q5_0(const GemmTile&);
void panel_q5_1(const GemmTile&);
void panel_q8_0(const GemmTile&);
void panel_q4_k(const GemmTile&);
void panel_q5_k(const GemmTile&);
void panel_q6_k(const GemmTile&);
void panel_swiglu_q4_0(const GemmTile&, const uint8_t* up);
void panel_swiglu_q4_1(const GemmTile&, const uint8_t* up);
void panel_swiglu_q5_0(const GemmTile&, const uint8_t* up);
void panel_swiglu_q5_1(const GemmTile&, const uint8_t* up);
void panel_swiglu_q8_0(const GemmTile&, const uint8_t* up);
void panel_swiglu_q4_k(const GemmTile&, const uint8_t* up);
void panel_swiglu_q5_k(const GemmTile&, const uint8_t* up);
void panel_swiglu_q6_k(const GemmTile&, const uint8_t* up);
// Q6_K's expanded form (PanelKernels::expand): its expansion, its kernels and
// the bytes of one expanded super-block.
void expand_q6_k(const uint8_t* group, int64_t cols, uint8_t* out);
void panel_q6_k_expanded(const GemmTile&);
void panel_swiglu_q6_k_expanded(const GemmTile&, const uint8_t* up);
int64_t q6_k_expanded_block_bytes();
// Sets the quantized formats' entries of out (before kFirstFloatPanel), with
// fused gates; leaves the others.
void panel_kernels(PanelKernels (&out)[kPanelFormats]);
}  // namespace avx512vnni
namespace amx {
// Sets the entries of out for Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K and Q5_K, with fused
// gates: AMX-INT8 tile products for tiles of 12 tokens or more (smaller tiles
// run the avx512vnni kernels), bit-identical to them. Leaves the others
// (Q6_K: the VNNI kernel).
void panel_kernels(PanelKernels (&out)[kPanelFormats]);
// The Q4_K and Q5_K entries of panel_kernels() (panel_k_amx.cpp).
void k_panel_kernels(PanelKernels (&out)[kPanelFormats]);
}  // namespace amx

}  // namespace db::kernels

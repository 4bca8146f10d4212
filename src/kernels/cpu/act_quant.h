// Activations quantized on the fly to int8 for integer dot products against
// quantized weights. Two granularities:
//  - Q8x32 (for Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 weights): 32-element blocks
//    with a float scale d, ds = d * sum(q) and zsum = -8 * sum(q) per block
//    (zsum is the zero-point term of Q4_0 codes, ready for an integer
//    accumulator; Q5_0's is twice it, Q8_0's 16 times it);
//  - Q8x256 (for K-quant weights): 256-element blocks with a float scale d and
//    the sums of q over each 16 elements (bsums).
// Within a block d = max|x| / 127 and q = round_to_nearest_even(x * (1 / d)),
// clamped to [-127, 127]. Q8x32 then stores d rounded to half precision (when d
// is in the normal half range), as the reference GGUF engines' Q8_0 / Q8_1
// activation blocks do, and ds = d * sum(q) from the rounded d (exact in float).
// Every ISA variant of the quantizer produces identical bytes.
//
// Two layouts of the same values (ActLayout):
//  - Rows: token t's codes at qs + t * qs_stride (block b at + b * block), its
//    per-block values d / ds / zsum at index t * nblocks + b, bsums at 16 times that.
//  - Tiles (read by the panel kernels): tokens in tiles of kActTileTokens, and
//    inside a tile block-major. Token t's block b is slot
//      act_slot(a, t, b) = ((t / kActTileTokens) * nblocks + b) * kActTileTokens + t % kActTileTokens,
//    its codes at qs + slot * block, d / ds / zsum at [slot], bsums at 16 * slot
//    (and the Tiles-only zsum16 / bsum32 at 16 / 8 * slot).
//    The tokens of a tile that share block b lie in consecutive slots, so a
//    kernel finds token t + j at a fixed distance from token t. Slots of the
//    padding tokens of the last tile are left unwritten.
//
// Plain data only (no member functions or default member initializers, so no
// inline code is emitted): ISA-specific files include this header. Value-initialize ({}).
#pragma once
#include <cstdint>

namespace db::kernels {

enum class ActLayout : uint8_t { Rows, Tiles };
inline constexpr int kActTileTokens = 16;

struct QuantizedActs {
  int64_t n_tokens;   // rows (tokens)
  int64_t cols;       // elements per row
  int block;         // 32 (Q8x32) or 256 (Q8x256)
  int64_t nblocks;    // cols / block
  int64_t qs_stride;  // Rows: bytes between rows of qs (a multiple of 64); Tiles: bytes per token (cols)
  // Shapes below are the Rows layout's; Tiles holds the same arrays by slot.
  int8_t* qs;   // [n_tokens][qs_stride] codes, 64-byte aligned rows
  float* d;     // [n_tokens][nblocks] block scales
  float* ds;    // Q8x32: [n_tokens][nblocks] d * sum(q) of each block; else null
  int32_t* zsum;   // Q8x32: [n_tokens][nblocks] -8 * sum(q) of each block; else null
  int16_t* bsums;  // Q8x256: [n_tokens][nblocks * 16] sums of q per 16 elements; else null
  // Q8x256 in the Tiles layout only (else null), derived from bsums for the
  // K-quant panel kernels:
  int32_t* zsum16;  // [slot][16] -32 * bsums, the Q6_K zero-point term of each 16 elements
  int16_t* bsum32;  // [slot][8] sums of q per 32 elements, for the Q4_K / Q5_K mins
};

// Slot of token t's block b in the Tiles layout (see above).
int64_t act_slot(const QuantizedActs& a, int64_t t, int64_t b);

// Quantizes one row of `cols` floats (cols % 32 == 0) into Q8x32 form.
using QuantizeRowQ8x32Fn = void (*)(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum);
// Quantizes one row of `cols` floats (cols % 256 == 0) into Q8x256 form.
using QuantizeRowQ8x256Fn = void (*)(const float* x, int64_t cols, int8_t* qs, float* d, int16_t* bsums);

void quantize_row_q8x32_scalar(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum);
void quantize_row_q8x256_scalar(const float* x, int64_t cols, int8_t* qs, float* d, int16_t* bsums);

namespace avx2 {
void quantize_row_q8x32(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum);
void quantize_row_q8x256(const float* x, int64_t cols, int8_t* qs, float* d, int16_t* bsums);
}  // namespace avx2

namespace avx512 {
void quantize_row_q8x32(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum);
void quantize_row_q8x256(const float* x, int64_t cols, int8_t* qs, float* d, int16_t* bsums);
}  // namespace avx512

}  // namespace db::kernels

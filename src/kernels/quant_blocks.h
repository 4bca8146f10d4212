// Quantization block layouts, byte for byte identical to GGML's. Every field is
// a byte array so that a block may sit at any address; read 16-bit fields with
// load_u16 (util/fp16.h). Elements are numbered 0..block_size-1 within a block.
#pragma once
#include <cstdint>
#include <cstring>

namespace db::kernels {

inline constexpr int kQK = 32;    // elements per Q4_0 / Q4_1 / Q5_0 / Q5_1 / Q8_0 block
inline constexpr int kQKK = 256;  // elements per K-quant super-block

// value[j] = d * ((qs[j] & 15) - 8), value[j + 16] = d * ((qs[j] >> 4) - 8), j < 16.
struct BlockQ4_0 {
  uint8_t d[2];    // fp16 scale
  uint8_t qs[16];  // 4-bit codes: element j in the low nibble of byte j, element j+16 in its high nibble
};

// value[j] = d * (qs[j] & 15) + m, value[j + 16] = d * (qs[j] >> 4) + m, j < 16.
struct BlockQ4_1 {
  uint8_t d[2];    // fp16 scale
  uint8_t m[2];    // fp16 offset (block minimum)
  uint8_t qs[16];  // 4-bit codes, nibble order as in BlockQ4_0
};

// value[k] = d * (q[k] - 16) with the 5-bit code q[k] = nibble k | (bit k of qh) << 4, k < 32:
// nibbles in BlockQ4_0's order, qh a little-endian 32-bit word of fifth bits.
struct BlockQ5_0 {
  uint8_t d[2];    // fp16 scale
  uint8_t qh[4];   // fifth bits: bit k belongs to element k
  uint8_t qs[16];  // low 4 bits, nibble order as in BlockQ4_0
};

// value[k] = d * q[k] + m, q[k] as in BlockQ5_0.
struct BlockQ5_1 {
  uint8_t d[2];    // fp16 scale
  uint8_t m[2];    // fp16 offset (block minimum)
  uint8_t qh[4];   // fifth bits: bit k belongs to element k
  uint8_t qs[16];  // low 4 bits, nibble order as in BlockQ4_0
};

// value[j] = d * qs[j].
struct BlockQ8_0 {
  uint8_t d[2];   // fp16 scale
  int8_t qs[32];  // signed 8-bit codes
};

// 8 sub-blocks of 32 elements; sub-block s has a 6-bit scale sc[s] and min m[s]
// (packed in `scales`, see get_scale_min_k4) and value = d * sc[s] * q - dmin * m[s].
// Bytes qs[32c .. 32c+32) hold sub-block 2c in their low nibbles and 2c+1 in their high nibbles.
struct BlockQ4_K {
  uint8_t d[2];         // fp16 super-block scale for the sub-block scales
  uint8_t dmin[2];      // fp16 super-block scale for the sub-block mins
  uint8_t scales[12];   // 8 scales + 8 mins, 6 bits each
  uint8_t qs[128];      // 4-bit codes
};

// As Q4_K with a fifth bit worth 16: for chunk c < 4 and l < 32, element 64c + l
// (low-nibble sub-block) uses bit 2c of qh[l] and element 64c + 32 + l uses bit 2c+1.
struct BlockQ5_K {
  uint8_t d[2];         // fp16 super-block scale for the sub-block scales
  uint8_t dmin[2];      // fp16 super-block scale for the sub-block mins
  uint8_t scales[12];   // 8 scales + 8 mins, 6 bits each (as Q4_K)
  uint8_t qh[32];       // fifth bits
  uint8_t qs[128];      // low 4 bits, nibble order as Q4_K
};

// 16 sub-blocks of 16 elements; value = d * scales[e / 16] * (q - 32) with a 6-bit q.
// For half h (elements 128h..128h+128) and l < 32, with L = ql + 64h and H = qh + 32h:
//   e = 128h + l      : low nibble of L[l]      | bits 0-1 of H[l] << 4
//   e = 128h + l + 32 : low nibble of L[l + 32] | bits 2-3 of H[l] << 4
//   e = 128h + l + 64 : high nibble of L[l]     | bits 4-5 of H[l] << 4
//   e = 128h + l + 96 : high nibble of L[l + 32]| bits 6-7 of H[l] << 4
struct BlockQ6_K {
  uint8_t ql[128];     // low 4 bits
  uint8_t qh[64];      // high 2 bits
  int8_t scales[16];   // signed 8-bit sub-block scales
  uint8_t d[2];        // fp16 super-block scale
};

static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 1);
static_assert(sizeof(BlockQ4_1) == 20 && alignof(BlockQ4_1) == 1);
static_assert(sizeof(BlockQ5_0) == 22 && alignof(BlockQ5_0) == 1);
static_assert(sizeof(BlockQ5_1) == 24 && alignof(BlockQ5_1) == 1);
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 1);
static_assert(sizeof(BlockQ4_K) == 144 && alignof(BlockQ4_K) == 1);
static_assert(sizeof(BlockQ5_K) == 176 && alignof(BlockQ5_K) == 1);
static_assert(sizeof(BlockQ6_K) == 210 && alignof(BlockQ6_K) == 1);

// The fifth bits of a BlockQ5_0 / BlockQ5_1 as one word (bit k: element k).
static inline uint32_t load_qh(const uint8_t* qh) {
  uint32_t v;
  std::memcpy(&v, qh, sizeof v);
  return v;  // GGUF files and this build are little-endian
}

// The fifth bits of a 32-element block as load_qh gives them; 0 for the 4-bit formats.
template <class Block>
static inline uint32_t fifth_bits(const Block& b) {
  if constexpr (requires { b.qh; })
    return load_qh(b.qh);
  else
    return 0;
}

// Code k (0..31) of a 32-element block with 4-bit codes qs and, for the 5-bit
// formats, fifth bits qh (the BlockQ5_0 word read as little-endian; 0 for Q4_0 / Q4_1).
static inline int block32_code(const uint8_t* qs, uint32_t qh, int k) {
  const int nibble = k < 16 ? qs[k] & 0xF : qs[k - 16] >> 4;
  return nibble | static_cast<int>(((qh >> k) & 1u) << 4);
}

// Unpacks the 6-bit scale and min of sub-block s (0..7) of a Q4_K / Q5_K block.
static inline void get_scale_min_k4(int s, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (s < 4) {
    *sc = q[s] & 63;
    *m = q[s + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[s + 4] & 0xF) | ((q[s - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[s + 4] >> 4) | ((q[s] >> 6) << 4));
  }
}

// All 8 scales and 8 mins of a Q4_K / Q5_K block.
static inline void unpack_scales_k4(const uint8_t* q, uint8_t sc[8], uint8_t m[8]) {
  for (int s = 0; s < 8; ++s) get_scale_min_k4(s, q, &sc[s], &m[s]);
}

}  // namespace db::kernels

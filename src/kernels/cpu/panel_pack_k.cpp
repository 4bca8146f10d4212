// The K-quant half of the Panels16 conversion (layout: kernels/cpu/panel_k_layout.h).
#include <cstddef>
#include <cstring>

#include "kernels/cpu/panel_k_layout.h"
#include "kernels/cpu/panel_pack_blocks.h"
#include "kernels/cpu/panels.h"
#include "kernels/quant_blocks.h"
#include "util/error.h"

namespace db::kernels {

int64_t k_high_bytes(DType t) { return t == DType::Q6_K ? 1024 : t == DType::Q5_K ? 512 : 0; }

KCodeSlot k_code_slot(DType t, int r, int e) {
  const int c = e / 32, k = e % 32;
  KCodeSlot s{};
  s.low = 256 * c + panel_code_offset(r, k % 16);
  s.low_shift = k < 16 ? 0 : 4;
  const int64_t lane_byte = 4 * r + k % 4;
  if (t == DType::Q6_K) {
    s.high = kKLowBytes + 64 * (2 * c + k / 16) + lane_byte;
    s.high_shift = 2 * ((k / 4) % 4);
  } else {
    s.high = kKLowBytes + 64 * c + lane_byte;
    s.high_shift = k / 4;
  }
  return s;
}

int k_code(DType t, const uint8_t* codes, int r, int e) {
  const KCodeSlot s = k_code_slot(t, r, e);
  int v = (codes[s.low] >> s.low_shift) & 15;
  if (t == DType::Q5_K) v |= ((codes[s.high] >> s.high_shift) & 1) << 4;
  if (t == DType::Q6_K) v |= ((codes[s.high] >> s.high_shift) & 3) << 4;
  return v;
}

int64_t k_scale_offset(DType t, int r, int s) {
  const int64_t base = kKLowBytes + k_high_bytes(t);
  return t == DType::Q6_K ? base + 32 * (s / 2) + 2 * r + s % 2 : base + 16 * s + r;
}

int64_t k_min_offset(DType t, int r, int s) { return kKLowBytes + k_high_bytes(t) + 128 + 16 * s + r; }

namespace {

// Where element e's bits lie inside a GGUF block: the low 4 bits in byte
// `low` at `low_shift`, the high bits (Q5_K: 1, Q6_K: 2) in byte `high` at `high_shift`.
struct GgufSlot {
  size_t low;
  int low_shift;
  size_t high;
  int high_shift;
};

GgufSlot gguf_slot(DType t, int e) {
  if (t == DType::Q6_K) {  // see BlockQ6_K
    const int h = e / 128, q = (e % 128) / 32, l = e % 32;
    return {offsetof(BlockQ6_K, ql) + 64 * h + l + 32 * (q & 1), 4 * (q >> 1), offsetof(BlockQ6_K, qh) + 32 * h + l,
            2 * q};
  }
  const int c = e / 64, half = (e % 64) / 32, l = e % 32;  // see BlockQ4_K / BlockQ5_K
  const size_t qs = t == DType::Q4_K ? offsetof(BlockQ4_K, qs) : offsetof(BlockQ5_K, qs);
  return {qs + 32 * c + l, 4 * half, offsetof(BlockQ5_K, qh) + l, 2 * c + half};
}

int high_mask(DType t) { return t == DType::Q6_K ? 3 : t == DType::Q5_K ? 1 : 0; }

// Offset of the fp16 d of a GGUF K block.
size_t d_offset(DType t) { return t == DType::Q6_K ? offsetof(BlockQ6_K, d) : offsetof(BlockQ4_K, d); }

// Inverse of get_scale_min_k4 over all 8 sub-blocks (the 96 bits map one to one).
void pack_scales_k4(const uint8_t sc[8], const uint8_t m[8], uint8_t* q) {
  for (int j = 0; j < 4; ++j) {
    q[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    q[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    q[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

// The GGUF bytes holding the low 4 bits of chunk c (elements 32c..32c+31):
// element 32c + k is nibble `nibble` of x[k].
struct LowSource {
  const uint8_t* x;
  int nibble;
};

LowSource low_source(DType t, const uint8_t* block, int c) {
  if (t == DType::Q6_K)  // see BlockQ6_K: chunk 4h + 2n + s is nibble n of ql[64h + 32s ..]
    return {block + offsetof(BlockQ6_K, ql) + 64 * (c / 4) + 32 * (c % 2), (c / 2) % 2};
  const size_t qs = t == DType::Q4_K ? offsetof(BlockQ4_K, qs) : offsetof(BlockQ5_K, qs);
  return {block + qs + 32 * (c / 2), c % 2};  // chunk 2c0 + n is nibble n of qs[32c0 ..]
}

// The packer reads the GGUF bytes as little-endian words and works on four or
// eight bytes at once (SWAR): each output word is one row's 4-byte run of a
// 64-byte register (see panel_k_layout.h), written once.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the K-quant packer reads little-endian words");

uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

void store32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Row r's 4-byte run of the 64-byte register at codes + reg_offset.
uint8_t* lane(uint8_t* codes, int64_t reg_offset, int r) { return codes + reg_offset + 4 * r; }

// Row r's 16 low-nibble bytes of one chunk (byte j: element j's nibble, then
// element j + 16's above it), as the four runs of put_chunk_codes.
void pack_low_chunk(const LowSource& s, int r, uint8_t* chunk) {
  constexpr uint64_t kNibbles = 0x0F0F0F0F0F0F0F0FULL;
  const int shift = 4 * s.nibble;
  for (int half = 0; half < 2; ++half) {  // bytes 8 half .. 8 half + 7
    const uint64_t lo = (load64(s.x + 8 * half) >> shift) & kNibbles;
    const uint64_t hi = (load64(s.x + 16 + 8 * half) >> shift) & kNibbles;
    const uint64_t bytes = lo | (hi << 4);
    store32(chunk + panel_code_offset(r, 8 * half), static_cast<uint32_t>(bytes));
    store32(chunk + panel_code_offset(r, 8 * half + 4), static_cast<uint32_t>(bytes >> 32));
  }
}

// Writes the high bits of row r's elements into the panel's high-bit
// registers (the byte and bit of each: k_code_slot).
//   Q6_K: chunk c's register 2c + h, byte e holds at bits 2i the two high bits
//         of element 16h + 4i + e, which are bits 2(c % 4) of qh[32(c / 4) + 16h + 4i + e];
//   Q5_K: chunk c's register, byte e holds at bit i the fifth bit of element
//         4i + e, which is bit c of qh[4i + e].
void pack_high_bits(DType t, const uint8_t* block, int r, uint8_t* codes) {
  if (t == DType::Q6_K) {
    const uint8_t* qh = block + offsetof(BlockQ6_K, qh);
    for (int c = 0; c < 8; ++c)
      for (int h = 0; h < 2; ++h) {
        const uint8_t* src = qh + 32 * (c / 4) + 16 * h;
        uint32_t word = 0;
        for (int i = 0; i < 4; ++i) word |= ((load32(src + 4 * i) >> (2 * (c % 4))) & 0x03030303u) << (2 * i);
        store32(lane(codes, kKLowBytes + 64 * (2 * c + h), r), word);
      }
  } else if (t == DType::Q5_K) {
    const uint8_t* qh = block + offsetof(BlockQ5_K, qh);
    for (int c = 0; c < 8; ++c) {
      uint32_t word = 0;
      for (int i = 0; i < 8; ++i) word |= ((load32(qh + 4 * i) >> c) & 0x01010101u) << i;
      store32(lane(codes, kKLowBytes + 64 * c, r), word);
    }
  }
}

}  // namespace

// Word-wise (the load-time hot path); k_code_slot / gguf_slot state the same
// mapping per element, and unpack_block_k inverts it through them.
void pack_block_k(DType t, const uint8_t* block, int r, uint8_t* codes, uint8_t* header) {
  for (int c = 0; c < 8; ++c) pack_low_chunk(low_source(t, block, c), r, codes + 256 * c);
  pack_high_bits(t, block, r, codes);
  std::memcpy(header + 2 * r, block + d_offset(t), 2);
  if (t == DType::Q6_K) {
    const auto* b = reinterpret_cast<const BlockQ6_K*>(block);
    for (int s = 0; s < 16; ++s) codes[k_scale_offset(t, r, s)] = static_cast<uint8_t>(b->scales[s]);
    return;
  }
  const auto* b = reinterpret_cast<const BlockQ4_K*>(block);  // Q5_K shares d, dmin and scales
  std::memcpy(header + 32 + 2 * r, b->dmin, 2);
  uint8_t sc[8], m[8];
  unpack_scales_k4(b->scales, sc, m);
  for (int s = 0; s < 8; ++s) {
    codes[k_scale_offset(t, r, s)] = sc[s];
    codes[k_min_offset(t, r, s)] = m[s];
  }
}

void unpack_block_k(DType t, const uint8_t* codes, const uint8_t* header, int r, uint8_t* block) {
  std::memset(block, 0, block_bytes(t));
  const int mask = high_mask(t);
  for (int e = 0; e < 256; ++e) {
    const GgufSlot g = gguf_slot(t, e);
    const KCodeSlot p = k_code_slot(t, r, e);
    block[g.low] |= static_cast<uint8_t>(((codes[p.low] >> p.low_shift) & 15) << g.low_shift);
    if (mask) block[g.high] |= static_cast<uint8_t>(((codes[p.high] >> p.high_shift) & mask) << g.high_shift);
  }
  std::memcpy(block + d_offset(t), header + 2 * r, 2);
  if (t == DType::Q6_K) {
    auto* b = reinterpret_cast<BlockQ6_K*>(block);
    for (int s = 0; s < 16; ++s) b->scales[s] = static_cast<int8_t>(codes[k_scale_offset(t, r, s)]);
    return;
  }
  auto* b = reinterpret_cast<BlockQ4_K*>(block);
  std::memcpy(b->dmin, header + 32 + 2 * r, 2);
  uint8_t sc[8], m[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = codes[k_scale_offset(t, r, s)];
    m[s] = codes[k_min_offset(t, r, s)];
  }
  pack_scales_k4(sc, m, b->scales);
}

}  // namespace db::kernels

// Decoding of the file's block layouts (kernels/quant_blocks.h) and of the KV cache's
// element types, shared by the CUDA kernels and, compiled for the host, by the test
// that checks it against kernels::dequantize_row_data without a GPU. Fields are read
// byte by byte: the layouts put 16-bit values at any address.
#pragma once
#include <cstdint>
#include <cstring>

#include "tensor/dtype.h"

#if defined(__CUDACC__)
#define DB_HOST_DEVICE __host__ __device__
#else
#define DB_HOST_DEVICE
#endif

namespace db::kernels::cuda {

DB_HOST_DEVICE inline uint16_t load_u16_le(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

DB_HOST_DEVICE inline float f32_from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE binary16 -> binary32, exact (subnormals, infinities and NaN included).
DB_HOST_DEVICE inline float half_bits_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // mant * 2^-24, exact
    return sign != 0 ? -v : v;
  }
  return f32_from_bits(exp == 31 ? (sign | 0x7F800000u | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13)));
}

DB_HOST_DEVICE inline float bf16_bits_to_f32(uint16_t h) { return f32_from_bits(static_cast<uint32_t>(h) << 16); }

// Weight i (0..31) of unit u (elements 32u .. 32u+32) of a matrix row stored in T
// (F32, F16, BF16, Q8_0, Q4_0, Q4_K or Q6_K), as kernels::dequantize_row_data gives it. The
// kernels read a unit with one lane per weight: the lanes' reads fall in one block.
template <DType T>
DB_HOST_DEVICE float load_weight(const uint8_t* row, int64_t u, int i) {
  if constexpr (T == DType::F32) {  // small f32 matrices: the MoE router
    float v;
    memcpy(&v, row + (u * 32 + i) * 4, sizeof v);
    return v;
  } else if constexpr (T == DType::F16) {
    return half_bits_to_f32(load_u16_le(row + (u * 32 + i) * 2));
  } else if constexpr (T == DType::BF16) {
    return bf16_bits_to_f32(load_u16_le(row + (u * 32 + i) * 2));
  } else if constexpr (T == DType::Q8_0) {
    const uint8_t* b = row + u * 34;
    return half_bits_to_f32(load_u16_le(b)) * static_cast<float>(static_cast<int8_t>(b[2 + i]));
  } else if constexpr (T == DType::Q4_0) {
    const uint8_t* b = row + u * 18;
    const int q = i < 16 ? (b[2 + i] & 15) : (b[2 + i - 16] >> 4);
    return half_bits_to_f32(load_u16_le(b)) * static_cast<float>(q - 8);
  } else if constexpr (T == DType::Q6_K) {
    // Super-block u / 8 (ql[128] qh[64] int8 scales[16] d): unit u % 8 is quarter
    // q = u % 4 of half h = (u % 8) / 4, value = d * scales[8h + i / 16 + 2q] * (code - 32).
    const uint8_t* b = row + (u / 8) * 210;
    const int h = static_cast<int>(u % 8) / 4, q = static_cast<int>(u % 4);
    const uint8_t ql = b[64 * h + i + (q % 2) * 32], qh = b[128 + 32 * h + i];
    const int code = ((q < 2 ? ql & 0xF : ql >> 4) | (((qh >> (2 * q)) & 3) << 4)) - 32;
    const int8_t scale = static_cast<int8_t>(b[192 + 8 * h + i / 16 + 2 * q]);
    return half_bits_to_f32(load_u16_le(b + 208)) * static_cast<float>(scale) * static_cast<float>(code);
  } else {
    static_assert(T == DType::Q4_K, "matmul weight types: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K");
    // Super-block u / 8, sub-block s = u % 8: value = d * sc[s] * q - dmin * m[s].
    const uint8_t* b = row + (u / 8) * 144;
    const int s = static_cast<int>(u % 8);
    const float d = half_bits_to_f32(load_u16_le(b)), dmin = half_bits_to_f32(load_u16_le(b + 2));
    const uint8_t* scales = b + 4;
    int sc, m;
    if (s < 4) {
      sc = scales[s] & 63;
      m = scales[s + 4] & 63;
    } else {
      sc = (scales[s + 4] & 0xF) | ((scales[s - 4] >> 6) << 4);
      m = (scales[s + 4] >> 4) | ((scales[s] >> 6) << 4);
    }
    const uint8_t byte = b[16 + 32 * (s / 2) + i];  // sub-blocks 2c and 2c+1 share bytes 32c .. 32c+32
    const int q = s % 2 == 0 ? (byte & 15) : (byte >> 4);
    return d * static_cast<float>(sc) * static_cast<float>(q) - dmin * static_cast<float>(m);
  }
}

// Element e of a KV cache row stored in T (F32, F16, BF16 or Q8_0: 34-byte blocks
// from the row's start, element e in block e / 32; tensor/kv_row_bytes.h).
template <DType T>
DB_HOST_DEVICE float load_element(const uint8_t* row, int64_t e) {
  if constexpr (T == DType::F32) {
    float v;
    memcpy(&v, row + 4 * e, sizeof v);
    return v;
  } else if constexpr (T == DType::F16) {
    return half_bits_to_f32(load_u16_le(row + 2 * e));
  } else if constexpr (T == DType::BF16) {
    return bf16_bits_to_f32(load_u16_le(row + 2 * e));
  } else {
    static_assert(T == DType::Q8_0, "KV cache types: F32, F16, BF16, Q8_0");
    const uint8_t* b = row + (e / 32) * 34;
    return half_bits_to_f32(load_u16_le(b)) * static_cast<float>(static_cast<int8_t>(b[2 + e % 32]));
  }
}

#if defined(__CUDACC__)
// The sum of v over the 32 lanes of a warp, in every lane.
__device__ inline float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
#endif

}  // namespace db::kernels::cuda

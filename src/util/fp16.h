// Conversions between float32 and the 16-bit float formats stored in model
// files: IEEE half (F16) and bfloat16 (BF16). Both directions round to nearest
// even. A translation unit compiled with F16C uses the hardware conversion for
// F16; the results are identical either way.
//
// Every function here has internal linkage (static inline) on purpose: files
// compiled with ISA-specific flags include this header, and an inline function
// with external linkage could let the linker pick their copy for the
// baseline-ISA code too.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace db {

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

static inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// IEEE half -> float32 (exact, including subnormals, infinities and NaNs).
static inline float fp16_to_f32(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return f32_from_bits(sign | 0x7F800000u | (mant << 13));
  if (exp != 0) return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24 is exact in float32.
  return f32_from_bits(sign | f32_bits(static_cast<float>(mant) * 0x1p-24f));
#endif
}

// float32 -> IEEE half, round to nearest even; overflow gives infinity, NaN stays NaN.
static inline uint16_t f32_to_fp16(float f) {
#if defined(__F16C__)
  return _cvtss_sh(f, 0);
#else
  uint32_t x = f32_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7FFFFFFFu;
  if (x > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((x >> 13) & 0x3FFu));
  if (x >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {
    // Half subnormal range: adding 0.5f aligns the half ulp (2^-24) with the float ulp.
    const uint32_t r = f32_bits(f32_from_bits(x) + 0.5f) - 0x3F000000u;
    return static_cast<uint16_t>(sign | r);
  }
  const uint32_t odd = (x >> 13) & 1u;
  x += 0xC8000FFFu + odd;  // rebias exponent by -112 and round to nearest even
  return static_cast<uint16_t>(sign | (x >> 13));
#endif
}

// bfloat16 -> float32 (exact).
static inline float bf16_to_f32(uint16_t h) { return f32_from_bits(static_cast<uint32_t>(h) << 16); }

// float32 -> bfloat16, round to nearest even; NaN stays a quiet NaN.
static inline uint16_t f32_to_bf16(float f) {
  const uint32_t x = f32_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

// Little-endian 16-bit load from any address.
static inline uint16_t load_u16(const void* p) {
  uint16_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace db

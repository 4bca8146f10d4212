#include "io/fp8.h"

#include <array>
#include <cmath>
#include <limits>

#include "util/error.h"

namespace db {

namespace {

// sign * mantissa * 2^exp for a format with `mbits` mantissa bits and exponent bias `bias`:
// exponent field 0 is subnormal (2^(1 - bias) * m / 2^mbits).
float fp8_compose(uint8_t v, int mbits, int bias) {
  const int ebits = 7 - mbits;
  const int e = (v >> mbits) & ((1 << ebits) - 1), m = v & ((1 << mbits) - 1);
  const float mag = e == 0 ? std::ldexp(static_cast<float>(m), 1 - bias - mbits)
                           : std::ldexp(static_cast<float>(m + (1 << mbits)), e - bias - mbits);
  return (v & 0x80) ? -mag : mag;
}

template <float (*Decode)(uint8_t)>
std::array<float, 256> fp8_make_table() {
  std::array<float, 256> t{};
  for (int v = 0; v < 256; ++v) t[static_cast<size_t>(v)] = Decode(static_cast<uint8_t>(v));
  return t;
}

}  // namespace

float fp8_e4m3_to_f32(uint8_t v) {
  if ((v & 0x7F) == 0x7F) return std::numeric_limits<float>::quiet_NaN();
  return fp8_compose(v, 3, 7);
}

float fp8_e5m2_to_f32(uint8_t v) {
  if (((v >> 2) & 0x1F) == 0x1F) {
    if ((v & 3) != 0) return std::numeric_limits<float>::quiet_NaN();
    return (v & 0x80) ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  return fp8_compose(v, 2, 15);
}

const float* fp8_decode_table(DType t) {
  static const std::array<float, 256> e4m3 = fp8_make_table<fp8_e4m3_to_f32>();
  static const std::array<float, 256> e5m2 = fp8_make_table<fp8_e5m2_to_f32>();
  if (t == DType::F8_E4M3) return e4m3.data();
  if (t == DType::F8_E5M2) return e5m2.data();
  throw Error("fp8_decode_table: expected F8_E4M3 or F8_E5M2, got " + dtype_name(t));
}

}  // namespace db

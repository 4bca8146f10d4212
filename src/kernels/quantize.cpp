#include "kernels/quantize.h"

#include <cmath>
#include <cstring>
#include <string>

#include "util/error.h"
#include "util/fp16.h"

namespace db::kernels {

namespace {

void store_u16(uint8_t* dst, uint16_t v) { std::memcpy(dst, &v, sizeof v); }

// GGML stores min(15, (int)(v)) for v >= 0; clamping first keeps NaN inputs defined.
uint8_t nibble_trunc(float v) { return static_cast<uint8_t>(std::fmin(std::fmax(v, 0.0f), 15.0f)); }
// The same for GGML's 5-bit codes: min(31, (int)(v)).
uint8_t code5_trunc(float v) { return static_cast<uint8_t>(std::fmin(std::fmax(v, 0.0f), 31.0f)); }

// Stores 32 five-bit codes in BlockQ5_0 / BlockQ5_1 order: low nibbles in qs, fifth bits in qh.
void store_codes5(const uint8_t (&q)[kQK], uint8_t* qs, uint8_t* qh) {
  uint32_t high = 0;
  for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + kQK / 2] & 0xF) << 4));
  for (int k = 0; k < kQK; ++k) high |= static_cast<uint32_t>(q[k] >> 4) << k;
  std::memcpy(qh, &high, sizeof high);
}

// The block's value of largest magnitude, signed (the first of equals).
float signed_absmax(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < kQK; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

// The block's smallest and largest values.
void min_max(const float* x, float& min, float& max) {
  min = max = x[0];
  for (int j = 1; j < kQK; ++j) {
    if (x[j] < min) min = x[j];
    if (x[j] > max) max = x[j];
  }
}

int64_t blocks_of(const char* what, int64_t n) {
  if (n < 0 || n % kQK != 0)
    throw Error(std::string(what) + ": row length " + std::to_string(n) + " is not a multiple of 32");
  return n / kQK;
}

}  // namespace

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n) {
  const int64_t nb = blocks_of("quantize_row_q4_0", n);
  for (int64_t b = 0; b < nb; ++b, x += kQK) {
    const float max = signed_absmax(x);
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(y[b].d, f32_to_fp16(d));
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t lo = nibble_trunc(x[j] * id + 8.5f);
      const uint8_t hi = nibble_trunc(x[j + kQK / 2] * id + 8.5f);
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n) {
  const int64_t nb = blocks_of("quantize_row_q4_1", n);
  for (int64_t b = 0; b < nb; ++b, x += kQK) {
    float min, max;
    min_max(x, min, max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(y[b].d, f32_to_fp16(d));
    store_u16(y[b].m, f32_to_fp16(min));
    for (int j = 0; j < kQK / 2; ++j) {
      const uint8_t lo = nibble_trunc((x[j] - min) * id + 0.5f);
      const uint8_t hi = nibble_trunc((x[j + kQK / 2] - min) * id + 0.5f);
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n) {
  const int64_t nb = blocks_of("quantize_row_q5_0", n);
  for (int64_t b = 0; b < nb; ++b, x += kQK) {
    const float max = signed_absmax(x);
    const float d = max / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(y[b].d, f32_to_fp16(d));
    uint8_t q[kQK];
    for (int k = 0; k < kQK; ++k) q[k] = code5_trunc(x[k] * id + 16.5f);
    store_codes5(q, y[b].qs, y[b].qh);
  }
}

void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n) {
  const int64_t nb = blocks_of("quantize_row_q5_1", n);
  for (int64_t b = 0; b < nb; ++b, x += kQK) {
    float min, max;
    min_max(x, min, max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(y[b].d, f32_to_fp16(d));
    store_u16(y[b].m, f32_to_fp16(min));
    uint8_t q[kQK];
    for (int k = 0; k < kQK; ++k) q[k] = code5_trunc((x[k] - min) * id + 0.5f);
    store_codes5(q, y[b].qs, y[b].qh);
  }
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  const int64_t nb = blocks_of("quantize_row_q8_0", n);
  for (int64_t b = 0; b < nb; ++b, x += kQK) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(y[b].d, f32_to_fp16(d));
    for (int j = 0; j < kQK; ++j) {
      const float v = std::fmin(std::fmax(x[j] * id, -127.0f), 127.0f);  // NaN -> -127, as clamped
      y[b].qs[j] = static_cast<int8_t>(std::round(v));
    }
  }
}

bool can_quantize(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0: return true;
    default: return false;
  }
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
  if (!can_quantize(t))
    throw Error("quantize_row: cannot quantize to " + dtype_name(t) +
                " (supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0)");
  if (n < 0) throw Error("quantize_row: negative row length " + std::to_string(n));
  auto* out = static_cast<uint8_t*>(dst);
  switch (t) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) store_u16(out + 2 * i, f32_to_fp16(src[i]));
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) store_u16(out + 2 * i, f32_to_bf16(src[i]));
      return;
    case DType::Q4_0: quantize_row_q4_0(src, reinterpret_cast<BlockQ4_0*>(dst), n); return;
    case DType::Q4_1: quantize_row_q4_1(src, reinterpret_cast<BlockQ4_1*>(dst), n); return;
    case DType::Q5_0: quantize_row_q5_0(src, reinterpret_cast<BlockQ5_0*>(dst), n); return;
    case DType::Q5_1: quantize_row_q5_1(src, reinterpret_cast<BlockQ5_1*>(dst), n); return;
    case DType::Q8_0: quantize_row_q8_0(src, reinterpret_cast<BlockQ8_0*>(dst), n); return;
    default: return;
  }
}

}  // namespace db::kernels

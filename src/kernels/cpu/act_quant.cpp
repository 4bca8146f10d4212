#include "kernels/cpu/act_quant.h"

#include <cmath>

#include "util/fp16.h"

namespace db::kernels {

namespace {

// Quantizes n floats with scale d = max|x| / 127; returns d, writes codes and their sum.
float quantize_block(const float* x, int n, int8_t* q) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float a = std::fabs(x[j]);
    amax = a > amax ? a : amax;
  }
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < n; ++j) {
    float v = x[j] * id;
    v = v > 127.0f ? 127.0f : (v < -127.0f ? -127.0f : v);
    q[j] = static_cast<int8_t>(std::lrint(v));  // nearest even, as the SIMD conversions
  }
  return d;
}

// d rounded to half precision, as the GGUF reference engines store activation
// block scales (Q8_0 / Q8_1); d itself outside the normal half range, where
// rounding would lose precision (subnormals) or overflow.
float half_rounded_scale(float d) {
  return d >= 0x1p-14f && d <= 65504.0f ? fp16_to_f32(f32_to_fp16(d)) : d;
}

}  // namespace

int64_t act_slot(const QuantizedActs& a, int64_t t, int64_t b) {
  return ((t / kActTileTokens) * a.nblocks + b) * kActTileTokens + t % kActTileTokens;
}

void quantize_row_q8x32_scalar(const float* x, int64_t cols, int8_t* qs, float* d, float* ds, int32_t* zsum) {
  for (int64_t b = 0; b < cols / 32; ++b) {
    d[b] = quantize_block(x + 32 * b, 32, qs + 32 * b);
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += qs[32 * b + j];
    d[b] = half_rounded_scale(d[b]);
    ds[b] = d[b] * static_cast<float>(sum);
    zsum[b] = -8 * sum;
  }
}

void quantize_row_q8x256_scalar(const float* x, int64_t cols, int8_t* qs, float* d, int16_t* bsums) {
  for (int64_t b = 0; b < cols / 256; ++b) {
    d[b] = quantize_block(x + 256 * b, 256, qs + 256 * b);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += qs[256 * b + 16 * g + j];
      bsums[16 * b + g] = static_cast<int16_t>(sum);
    }
  }
}

}  // namespace db::kernels

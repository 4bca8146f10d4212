#include "kernels/quantize_k.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"
#include "util/fp16.h"

namespace db::kernels {

namespace {

void q4k_store_u16(uint8_t* dst, uint16_t v) { std::memcpy(dst, &v, sizeof v); }

// Inverse of get_scale_min_k4: 8 six-bit scales and mins into the 12 bytes of `q`.
void q4k_pack_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t* q) {
  for (int k = 0; k < 12; ++k) q[k] = 0;
  for (int s = 0; s < 4; ++s) {
    q[s] = sc[s];
    q[s + 4] = m[s];
  }
  for (int s = 4; s < 8; ++s) {
    q[s + 4] = static_cast<uint8_t>((sc[s] & 0xF) | ((m[s] & 0xF) << 4));
    q[s - 4] = static_cast<uint8_t>(q[s - 4] | ((sc[s] >> 4) << 6));
    q[s] = static_cast<uint8_t>(q[s] | ((m[s] >> 4) << 6));
  }
}

uint8_t q4k_round_clamp(float v, int hi) {
  return static_cast<uint8_t>(std::clamp(static_cast<int>(std::lround(std::isfinite(v) ? v : 0.0f)), 0, hi));
}

}  // namespace

void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t n) {
  if (n < 0 || n % kQKK != 0)
    throw Error("quantize_row_q4_k: row length " + std::to_string(n) + " is not a multiple of 256");
  for (int64_t b = 0; b < n / kQKK; ++b, x += kQKK) {
    float scale[8], minv[8], max_scale = 0.0f, max_min = 0.0f;
    for (int s = 0; s < 8; ++s) {
      const float* v = x + 32 * s;
      float lo = std::min(0.0f, *std::min_element(v, v + 32)), hi = *std::max_element(v, v + 32);
      scale[s] = (hi - lo) / 15.0f;
      minv[s] = -lo;
      max_scale = std::max(max_scale, scale[s]);
      max_min = std::max(max_min, minv[s]);
    }
    const uint16_t d16 = f32_to_fp16(max_scale / 63.0f), dmin16 = f32_to_fp16(max_min / 63.0f);
    const float d = fp16_to_f32(d16), dmin = fp16_to_f32(dmin16);
    uint8_t sc[8], m[8];
    for (int s = 0; s < 8; ++s) {
      sc[s] = d > 0.0f ? q4k_round_clamp(scale[s] / d, 63) : 0;
      m[s] = dmin > 0.0f ? q4k_round_clamp(minv[s] / dmin, 63) : 0;
    }
    BlockQ4_K& blk = y[b];
    q4k_store_u16(blk.d, d16);
    q4k_store_u16(blk.dmin, dmin16);
    q4k_pack_scales(sc, m, blk.scales);
    for (int s = 0; s < 8; ++s) {
      const float step = d * sc[s], off = dmin * m[s];
      for (int l = 0; l < 32; ++l) {
        const uint8_t q = step > 0.0f ? q4k_round_clamp((x[32 * s + l] + off) / step, 15) : 0;
        uint8_t& byte = blk.qs[32 * (s / 2) + l];
        byte = (s % 2 == 0) ? static_cast<uint8_t>((byte & 0xF0) | q) : static_cast<uint8_t>((byte & 0x0F) | (q << 4));
      }
    }
  }
}

}  // namespace db::kernels

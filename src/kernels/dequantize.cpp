#include "kernels/dequantize.h"

#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/panels.h"
#include "kernels/matmul.h"
#include "kernels/quant_blocks.h"
#include "util/error.h"
#include "util/fp16.h"

namespace db::kernels {

namespace {

// Q4_0 (ZeroPoint 8) and Q5_0 (16): value = d * (code - ZeroPoint).
template <class Block, int ZeroPoint>
void dequant_symmetric32(const Block* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b, y += kQK) {
    const float d = fp16_to_f32(load_u16(x[b].d));
    const uint32_t qh = fifth_bits(x[b]);
    for (int k = 0; k < kQK; ++k) y[k] = static_cast<float>(block32_code(x[b].qs, qh, k) - ZeroPoint) * d;
  }
}

// Q4_1 and Q5_1: value = d * code + m.
template <class Block>
void dequant_offset32(const Block* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b, y += kQK) {
    const float d = fp16_to_f32(load_u16(x[b].d));
    const float m = fp16_to_f32(load_u16(x[b].m));
    const uint32_t qh = fifth_bits(x[b]);
    for (int k = 0; k < kQK; ++k) y[k] = static_cast<float>(block32_code(x[b].qs, qh, k)) * d + m;
  }
}

void dequant_q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b, y += kQK) {
    const float d = fp16_to_f32(load_u16(x[b].d));
    for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[b].qs[j]) * d;
  }
}

void dequant_q4_k(const BlockQ4_K* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = fp16_to_f32(load_u16(x[b].d));
    const float dmin = fp16_to_f32(load_u16(x[b].dmin));
    uint8_t sc[8], m[8];
    unpack_scales_k4(x[b].scales, sc, m);
    for (int c = 0; c < 4; ++c) {
      const uint8_t* q = x[b].qs + 32 * c;
      const float d1 = d * sc[2 * c], m1 = dmin * m[2 * c];
      const float d2 = d * sc[2 * c + 1], m2 = dmin * m[2 * c + 1];
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void dequant_q5_k(const BlockQ5_K* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = fp16_to_f32(load_u16(x[b].d));
    const float dmin = fp16_to_f32(load_u16(x[b].dmin));
    uint8_t sc[8], m[8];
    unpack_scales_k4(x[b].scales, sc, m);
    for (int c = 0; c < 4; ++c) {
      const uint8_t* q = x[b].qs + 32 * c;
      const uint8_t* qh = x[b].qh;
      const float d1 = d * sc[2 * c], m1 = dmin * m[2 * c];
      const float d2 = d * sc[2 * c + 1], m2 = dmin * m[2 * c + 1];
      for (int l = 0; l < 32; ++l) {
        const int v = (q[l] & 0xF) | (((qh[l] >> (2 * c)) & 1) << 4);
        *y++ = d1 * static_cast<float>(v) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        const int v = (q[l] >> 4) | (((qh[l] >> (2 * c + 1)) & 1) << 4);
        *y++ = d2 * static_cast<float>(v) - m2;
      }
    }
  }
}

void dequant_q6_k(const BlockQ6_K* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b, y += kQKK) {
    const float d = fp16_to_f32(load_u16(x[b].d));
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = x[b].ql + 64 * h;
      const uint8_t* qh = x[b].qh + 32 * h;
      const int8_t* sc = x[b].scales + 8 * h;
      float* out = y + 128 * h;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        out[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
        out[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
        out[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
        out[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
      }
    }
  }
}

}  // namespace

bool can_dequantize(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K: return true;
    default: return false;
  }
}

void dequantize_row_data(DType t, const void* src, float* dst, int64_t n) {
  if (!can_dequantize(t))
    throw Error("dequantize: " + dtype_name(t) +
                " is not supported (supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)");
  if (n < 0 || n % block_size(t) != 0)
    throw Error("dequantize: row length " + std::to_string(n) + " is not a multiple of the " + dtype_name(t) +
                " block size " + std::to_string(block_size(t)));
  const auto* p = static_cast<const uint8_t*>(src);
  const int64_t nb = n / block_size(t);
  switch (t) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(load_u16(p + 2 * i));
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(p + 2 * i));
      return;
    case DType::Q4_0: dequant_symmetric32<BlockQ4_0, 8>(reinterpret_cast<const BlockQ4_0*>(p), dst, nb); return;
    case DType::Q4_1: dequant_offset32(reinterpret_cast<const BlockQ4_1*>(p), dst, nb); return;
    case DType::Q5_0: dequant_symmetric32<BlockQ5_0, 16>(reinterpret_cast<const BlockQ5_0*>(p), dst, nb); return;
    case DType::Q5_1: dequant_offset32(reinterpret_cast<const BlockQ5_1*>(p), dst, nb); return;
    case DType::Q8_0: dequant_q8_0(reinterpret_cast<const BlockQ8_0*>(p), dst, nb); return;
    case DType::Q4_K: dequant_q4_k(reinterpret_cast<const BlockQ4_K*>(p), dst, nb); return;
    case DType::Q5_K: dequant_q5_k(reinterpret_cast<const BlockQ5_K*>(p), dst, nb); return;
    case DType::Q6_K: dequant_q6_k(reinterpret_cast<const BlockQ6_K*>(p), dst, nb); return;
    default: return;
  }
}

void dequantize_row(const TensorView& W, int64_t r, float* dst) {
  if (W.data == nullptr) throw Error("dequantize_row: tensor " + W.shape_str() + " has no data");
  if (r < 0 || r >= W.rows())
    throw Error("dequantize_row: row " + std::to_string(r) + " out of range for a tensor of shape " + W.shape_str());
  if (W.layout == TensorLayout::Panels16) {
    std::vector<uint8_t> row(row_bytes(W.dtype, W.cols()));
    unpack_panel_row(W.dtype, static_cast<const uint8_t*>(W.data), W.cols(), r, row.data());
    dequantize_row_data(W.dtype, row.data(), dst, W.cols());
    return;
  }
  dequantize_row_data(W.dtype, W.row(r), dst, W.cols());
}

}  // namespace db::kernels

// Scalar Panels16 kernels: the reference the vector kernels equal bit for bit
// (the formula and operation order are in kernels/cpu/panels.h). Quantized
// formats read activations in the Tiles layout (kernels/cpu/act_quant.h),
// float formats the f32 values GemmTile.x points at.
#include <cmath>
#include <cstring>

#include "kernels/cpu/panel_k_layout.h"
#include "kernels/cpu/panels.h"
#include "kernels/quant_blocks.h"
#include "util/fp16.h"

namespace db::kernels::scalar {

namespace {

template <DType T>
int code(const uint8_t* codes, int r, int k) {
  if (T == DType::Q8_0) return codes[panel_code_offset(r, k)];
  const uint8_t byte = codes[panel_code_offset(r, k % 16)];
  const int nibble = k < 16 ? byte & 15 : byte >> 4;
  if (T != DType::Q5_0 && T != DType::Q5_1) return nibble;
  return nibble | ((codes[kPanelFifthBits + panel_fifth_bit_byte(r, k)] >> (k / 4)) & 1) << 4;
}

template <DType T>
void panel_gemm(const GemmTile& t) {
  constexpr int kZeroPoint = T == DType::Q4_0 ? 8 : T == DType::Q5_0 ? 16 : T == DType::Q8_0 ? 128 : 0;
  constexpr bool kHasMin = T == DType::Q4_1 || T == DType::Q5_1;
  const QuantizedActs& a = *t.acts;
  const int64_t nb = t.cols / kQK;
  const int64_t code_bytes = panel_code_bytes(T), header_bytes = panel_header_bytes(T);
  for (int j = 0; j < t.nt; ++j) {
    const int64_t tok = t.t0 + j;
    for (int r = 0; r < t.nr; ++r) {
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* codes = t.w + b * code_bytes;
        const uint8_t* header = t.w + nb * code_bytes + b * header_bytes;
        const int64_t slot = act_slot(a, tok, b);
        const int8_t* q = a.qs + slot * kQK;
        int32_t dot = (kZeroPoint / 8) * a.zsum[slot];
        for (int k = 0; k < kQK; ++k) dot += code<T>(codes, r, k) * q[k];
        const float d = fp16_to_f32(load_u16(header + 2 * r));
        if (kHasMin) acc = std::fma(fp16_to_f32(load_u16(header + 32 + 2 * r)), a.ds[slot], acc);
        acc = std::fma(static_cast<float>(dot), d * a.d[slot], acc);
      }
      t.y[j * t.ldy + r] = acc;
    }
  }
}

// The K-quant formulas of kernels/cpu/panels.h for one row and one token's
// super-block (its activation slot `slot`).
template <DType T>
float k_block(const uint8_t* codes, const uint8_t* header, int r, const QuantizedActs& a, int64_t slot, float acc) {
  const int8_t* q = a.qs + slot * 256;
  const float d = fp16_to_f32(load_u16(header + 2 * r));
  float f = 0.0f;
  if (T == DType::Q6_K) {
    for (int g = 0; g < 16; ++g) {
      int32_t dot = a.zsum16[16 * slot + g];
      for (int k = 0; k < 16; ++k) dot += k_code(T, codes, r, 16 * g + k) * q[16 * g + k];
      const auto sc = static_cast<int8_t>(codes[k_scale_offset(T, r, g)]);
      f = std::fma(static_cast<float>(dot), d * static_cast<float>(sc), f);
    }
    return std::fma(f, a.d[slot], acc);
  }
  int32_t mins = 0;
  for (int s = 0; s < 8; ++s) mins += codes[k_min_offset(T, r, s)] * a.bsum32[8 * slot + s];
  f = static_cast<float>(mins) * -fp16_to_f32(load_u16(header + 32 + 2 * r));
  for (int s = 0; s < 8; ++s) {
    int32_t dot = 0;
    for (int k = 0; k < 32; ++k) dot += k_code(T, codes, r, 32 * s + k) * q[32 * s + k];
    f = std::fma(static_cast<float>(dot), d * static_cast<float>(codes[k_scale_offset(T, r, s)]), f);
  }
  return std::fma(f, a.d[slot], acc);
}

template <DType T>
void panel_k_gemm(const GemmTile& t) {
  const QuantizedActs& a = *t.acts;
  const int64_t nb = t.cols / 256;
  const int64_t code_bytes = panel_code_bytes(T), header_bytes = panel_header_bytes(T);
  for (int j = 0; j < t.nt; ++j) {
    const int64_t tok = t.t0 + j;
    for (int r = 0; r < t.nr; ++r) {
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        acc = k_block<T>(t.w + b * code_bytes, t.w + nb * code_bytes + b * header_bytes, r, a, act_slot(a, tok, b),
                         acc);
      }
      t.y[j * t.ldy + r] = acc;
    }
  }
}

// Element k of row r of a float panel, as f32 (exact).
template <DType T>
float float_weight(const uint8_t* group, int r, int64_t k) {
  const uint8_t* p = group + (k * kPanelRows + r) * (T == DType::F32 ? 4 : 2);
  if (T == DType::F32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  return T == DType::F16 ? fp16_to_f32(load_u16(p)) : bf16_to_f32(load_u16(p));
}

template <DType T>
void panel_float_gemm(const GemmTile& t) {
  for (int j = 0; j < t.nt; ++j)
    for (int r = 0; r < t.nr; ++r) {
      float& y = t.y[j * t.ldy + r];
      float acc = t.k0 == 0 ? 0.0f : y;
      for (int64_t k = t.k0; k < t.k1; ++k) acc = std::fma(float_weight<T>(t.w, r, k), t.x[k * t.x_kstride + j], acc);
      y = acc;
    }
}

}  // namespace

void panel_q4_0(const GemmTile& t) { panel_gemm<DType::Q4_0>(t); }
void panel_q4_1(const GemmTile& t) { panel_gemm<DType::Q4_1>(t); }
void panel_q5_0(const GemmTile& t) { panel_gemm<DType::Q5_0>(t); }
void panel_q5_1(const GemmTile& t) { panel_gemm<DType::Q5_1>(t); }
void panel_q8_0(const GemmTile& t) { panel_gemm<DType::Q8_0>(t); }
void panel_q4_k(const GemmTile& t) { panel_k_gemm<DType::Q4_K>(t); }
void panel_q5_k(const GemmTile& t) { panel_k_gemm<DType::Q5_K>(t); }
void panel_q6_k(const GemmTile& t) { panel_k_gemm<DType::Q6_K>(t); }
void panel_f32(const GemmTile& t) { panel_float_gemm<DType::F32>(t); }
void panel_f16(const GemmTile& t) { panel_float_gemm<DType::F16>(t); }
void panel_bf16(const GemmTile& t) { panel_float_gemm<DType::BF16>(t); }

void panel_kernels(PanelKernels (&out)[kPanelFormats]) {
  const GemmTileFn fns[kPanelFormats] = {panel_q4_0, panel_q4_1, panel_q8_0, panel_q4_k, panel_q5_k, panel_q6_k,
                                         panel_q5_0, panel_q5_1, panel_f32,  panel_f16,  panel_bf16};
  for (int i = 0; i < kPanelFormats; ++i) out[i] = {fns[i], nullptr};
}

}  // namespace db::kernels::scalar

// Scalar Panels16 kernels: the reference the vector kernels equal bit for bit
// (the formula and operation order are in kernels/cpu/panels.h).
#include <cmath>

#include "kernels/cpu/panels.h"
#include "kernels/quant_blocks.h"
#include "util/fp16.h"

namespace db::kernels::scalar {

namespace {

template <DType T>
int code(const uint8_t* codes, int r, int k) {
  if (T == DType::Q8_0) return codes[panel_code_offset(r, k)];
  const uint8_t byte = codes[panel_code_offset(r, k % 16)];
  return k < 16 ? byte & 15 : byte >> 4;
}

template <DType T>
void panel_gemm(const GemmTile& t) {
  constexpr int kZeroPoint = T == DType::Q4_0 ? 8 : T == DType::Q8_0 ? 128 : 0;
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
        const int8_t* q = a.qs + tok * a.qs_stride + b * kQK;
        const int32_t isum = a.isum[tok * a.nblocks + b];
        int32_t dot = -kZeroPoint * isum;
        for (int k = 0; k < kQK; ++k) dot += code<T>(codes, r, k) * q[k];
        const float d = fp16_to_f32(load_u16(header + 2 * r));
        if (T == DType::Q4_1) acc = std::fma(fp16_to_f32(load_u16(header + 32 + 2 * r)), a.ds[tok * a.nblocks + b], acc);
        acc = std::fma(static_cast<float>(dot), d * a.d[tok * a.nblocks + b], acc);
      }
      t.y[j * t.ldy + r] = acc;
    }
  }
}

}  // namespace

void panel_q4_0(const GemmTile& t) { panel_gemm<DType::Q4_0>(t); }
void panel_q4_1(const GemmTile& t) { panel_gemm<DType::Q4_1>(t); }
void panel_q8_0(const GemmTile& t) { panel_gemm<DType::Q8_0>(t); }

}  // namespace db::kernels::scalar

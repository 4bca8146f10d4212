// Portable reference kernels: one dot product per (row, token), integer sums
// within each block, float accumulation across blocks.
#include <cstring>

#include "kernels/cpu/gemm_tile.h"
#include "kernels/quant_blocks.h"
#include "util/fp16.h"

namespace db::kernels::scalar {

namespace {

// Per-token view of the quantized activations.
struct ActRow {
  const int8_t* q;
  const float* d;
  const float* ds;
  const int16_t* bsums;
};

ActRow act_row(const QuantizedActs& a, int64_t t) {
  return ActRow{a.qs + t * a.qs_stride, a.d + t * a.nblocks, a.ds ? a.ds + t * a.nblocks : nullptr,
                a.bsums ? a.bsums + t * a.nblocks * 16 : nullptr};
}

// Sum over the 32 elements of a block of code * activation.
template <class Block>
int dot_codes32(const Block& w, const int8_t* a) {
  const uint32_t qh = fifth_bits(w);
  int s = 0;
  for (int k = 0; k < kQK; ++k) s += block32_code(w.qs, qh, k) * a[k];
  return s;
}

// Q4_0 (ZeroPoint 8) and Q5_0 (16): sum_b dw * (da * dot(code, a) - ZeroPoint * ds).
template <class Block, int ZeroPoint>
float dot_symmetric32(const uint8_t* row, const ActRow& a, int64_t nb) {
  const auto* w = reinterpret_cast<const Block*>(row);
  float sum = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const float dw = fp16_to_f32(load_u16(w[b].d));
    const int isum = dot_codes32(w[b], a.q + 32 * b);
    sum += dw * (a.d[b] * static_cast<float>(isum) - static_cast<float>(ZeroPoint) * a.ds[b]);
  }
  return sum;
}

// Q4_1 and Q5_1: sum_b dw * da * dot(code, a) + m * ds.
template <class Block>
float dot_offset32(const uint8_t* row, const ActRow& a, int64_t nb) {
  const auto* w = reinterpret_cast<const Block*>(row);
  float sum = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const float dw = fp16_to_f32(load_u16(w[b].d));
    const float mw = fp16_to_f32(load_u16(w[b].m));
    const int isum = dot_codes32(w[b], a.q + 32 * b);
    sum += dw * a.d[b] * static_cast<float>(isum) + mw * a.ds[b];
  }
  return sum;
}

float dot_q8_0(const uint8_t* row, const ActRow& a, int64_t nb) {
  const auto* w = reinterpret_cast<const BlockQ8_0*>(row);
  float sum = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    int isum = 0;
    for (int j = 0; j < 32; ++j) isum += w[b].qs[j] * a.q[32 * b + j];
    sum += fp16_to_f32(load_u16(w[b].d)) * a.d[b] * static_cast<float>(isum);
  }
  return sum;
}

// Sum over sub-blocks of the scaled code sums, and of the mins times the activation sums.
struct KSums {
  int scaled = 0;
  int mins = 0;
};

KSums k4_sums(const uint8_t* scales, const int8_t* a, const int16_t* bsums, const int* codes) {
  uint8_t sc[8], m[8];
  unpack_scales_k4(scales, sc, m);
  KSums s;
  for (int sb = 0; sb < 8; ++sb) {
    int dot = 0;
    for (int l = 0; l < 32; ++l) dot += codes[32 * sb + l] * a[32 * sb + l];
    s.scaled += sc[sb] * dot;
    s.mins += m[sb] * (bsums[2 * sb] + bsums[2 * sb + 1]);
  }
  return s;
}

float dot_q4_k(const uint8_t* row, const ActRow& a, int64_t nb) {
  const auto* w = reinterpret_cast<const BlockQ4_K*>(row);
  float sum = 0.0f;
  int codes[256];
  for (int64_t b = 0; b < nb; ++b) {
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        codes[64 * c + l] = w[b].qs[32 * c + l] & 0xF;
        codes[64 * c + 32 + l] = w[b].qs[32 * c + l] >> 4;
      }
    const KSums s = k4_sums(w[b].scales, a.q + 256 * b, a.bsums + 16 * b, codes);
    const float dw = fp16_to_f32(load_u16(w[b].d)), dmin = fp16_to_f32(load_u16(w[b].dmin));
    sum += a.d[b] * (dw * static_cast<float>(s.scaled) - dmin * static_cast<float>(s.mins));
  }
  return sum;
}

float dot_q5_k(const uint8_t* row, const ActRow& a, int64_t nb) {
  const auto* w = reinterpret_cast<const BlockQ5_K*>(row);
  float sum = 0.0f;
  int codes[256];
  for (int64_t b = 0; b < nb; ++b) {
    for (int c = 0; c < 4; ++c)
      for (int l = 0; l < 32; ++l) {
        const int qh = w[b].qh[l];
        codes[64 * c + l] = (w[b].qs[32 * c + l] & 0xF) | (((qh >> (2 * c)) & 1) << 4);
        codes[64 * c + 32 + l] = (w[b].qs[32 * c + l] >> 4) | (((qh >> (2 * c + 1)) & 1) << 4);
      }
    const KSums s = k4_sums(w[b].scales, a.q + 256 * b, a.bsums + 16 * b, codes);
    const float dw = fp16_to_f32(load_u16(w[b].d)), dmin = fp16_to_f32(load_u16(w[b].dmin));
    sum += a.d[b] * (dw * static_cast<float>(s.scaled) - dmin * static_cast<float>(s.mins));
  }
  return sum;
}

float dot_q6_k(const uint8_t* row, const ActRow& a, int64_t nb) {
  const auto* w = reinterpret_cast<const BlockQ6_K*>(row);
  float sum = 0.0f;
  int codes[256];
  for (int64_t b = 0; b < nb; ++b) {
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = w[b].ql + 64 * h;
      const uint8_t* qh = w[b].qh + 32 * h;
      int* out = codes + 128 * h;
      for (int l = 0; l < 32; ++l) {
        out[l] = (ql[l] & 0xF) | ((qh[l] & 3) << 4);
        out[l + 32] = (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4);
        out[l + 64] = (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4);
        out[l + 96] = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4);
      }
    }
    const int8_t* q = a.q + 256 * b;
    int isum = 0;
    for (int g = 0; g < 16; ++g) {
      int dot = 0;
      for (int l = 0; l < 16; ++l) dot += codes[16 * g + l] * q[16 * g + l];
      isum += w[b].scales[g] * (dot - 32 * a.bsums[16 * b + g]);
    }
    sum += fp16_to_f32(load_u16(w[b].d)) * a.d[b] * static_cast<float>(isum);
  }
  return sum;
}

using QuantDotFn = float (*)(const uint8_t* row, const ActRow& a, int64_t nb);

void quant_tile(const GemmTile& t, QuantDotFn dot) {
  const QuantizedActs& acts = *t.acts;
  for (int j = 0; j < t.nt; ++j) {
    const ActRow a = act_row(acts, t.t0 + j);
    for (int r = 0; r < t.nr; ++r) t.y[j * t.ldy + r] = dot(t.w + r * t.w_stride, a, acts.nblocks);
  }
}

template <class Load>
void float_tile(const GemmTile& t, Load load) {
  for (int j = 0; j < t.nt; ++j) {
    const float* x = t.x + (t.t0 + j) * t.cols;
    for (int r = 0; r < t.nr; ++r) {
      const uint8_t* row = t.w + r * t.w_stride;
      float sum = 0.0f;
      for (int64_t i = 0; i < t.cols; ++i) sum += load(row, i) * x[i];
      t.y[j * t.ldy + r] = sum;
    }
  }
}

float load_f32(const uint8_t* row, int64_t i) {
  float v;
  std::memcpy(&v, row + 4 * i, sizeof v);
  return v;
}
float load_f16(const uint8_t* row, int64_t i) { return fp16_to_f32(load_u16(row + 2 * i)); }
float load_bf16(const uint8_t* row, int64_t i) { return bf16_to_f32(load_u16(row + 2 * i)); }

}  // namespace

void gemm_f32(const GemmTile& t) { float_tile(t, load_f32); }
void gemm_f16(const GemmTile& t) { float_tile(t, load_f16); }
void gemm_bf16(const GemmTile& t) { float_tile(t, load_bf16); }
void gemm_q4_0(const GemmTile& t) { quant_tile(t, dot_symmetric32<BlockQ4_0, 8>); }
void gemm_q4_1(const GemmTile& t) { quant_tile(t, dot_offset32<BlockQ4_1>); }
void gemm_q5_0(const GemmTile& t) { quant_tile(t, dot_symmetric32<BlockQ5_0, 16>); }
void gemm_q5_1(const GemmTile& t) { quant_tile(t, dot_offset32<BlockQ5_1>); }
void gemm_q8_0(const GemmTile& t) { quant_tile(t, dot_q8_0); }
void gemm_q4_k(const GemmTile& t) { quant_tile(t, dot_q4_k); }
void gemm_q5_k(const GemmTile& t) { quant_tile(t, dot_q5_k); }
void gemm_q6_k(const GemmTile& t) { quant_tile(t, dot_q6_k); }

}  // namespace db::kernels::scalar

#include <cstring>

#include "kernels/cpu/attention_load_rows.h"
#include "kernels/cpu/attention_ops.h"
#include "kernels/quantize.h"
#include "util/error.h"
#include "util/fp16.h"

namespace db::kernels {

namespace {

// The portable row converters of load_rows_with().
void scalar_convert_row(const uint8_t* src, DType dtype, int d, float* out) {
  if (dtype == DType::F16)
    for (int i = 0; i < d; ++i) out[i] = fp16_to_f32(load_u16(src + 2 * i));
  else
    for (int i = 0; i < d; ++i) out[i] = bf16_to_f32(load_u16(src + 2 * i));
}

void scalar_dequant_run(const int8_t* codes, float scale, int n, float* out) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<float>(codes[i]) * scale;
}

void load_rows(const void* base, DType dtype, const int64_t* slots, int n_rows, int64_t row_stride, int head, int d,
               float* dst) {
  load_rows_with(scalar_convert_row, scalar_dequant_run, base, dtype, slots, n_rows, row_stride, head, d, d, dst);
}

float dot(const float* a, const float* b, int n) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lanes[j] += a[i + j] * b[i + j];
  float s = ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

void scores(const float* q, const float* keys, int n_keys, int d, float scale, float* out) {
  for (int j = 0; j < n_keys; ++j) out[j] = dot(q, keys + static_cast<int64_t>(j) * d, d) * scale;
}

void accumulate(float* acc, float correction, const float* weights, const float* values, int n_keys, int d) {
  if (correction != 1.0f)
    for (int i = 0; i < d; ++i) acc[i] *= correction;
  for (int j = 0; j < n_keys; ++j) {
    const float w = weights[j];
    const float* v = values + static_cast<int64_t>(j) * d;
    for (int i = 0; i < d; ++i) acc[i] += w * v[i];
  }
}

}  // namespace

void store_row_scalar(const float* src, int64_t n, DType dtype, uint8_t* dst) {
  switch (dtype) {
    case DType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_fp16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = f32_to_bf16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      return;
    case DType::Q8_0: {
      // GGML's reference quantizer on whole blocks; a short last block is
      // padded with zeros, which quantize to zero codes and do not move its scale.
      auto* blocks = reinterpret_cast<BlockQ8_0*>(dst);
      const int64_t whole = n / 32 * 32;
      if (whole > 0) quantize_row_q8_0(src, blocks, whole);
      if (whole < n) {
        float last[32] = {};
        std::memcpy(last, src + whole, static_cast<size_t>(n - whole) * sizeof(float));
        quantize_row_q8_0(last, blocks + whole / 32, 32);
      }
      return;
    }
    default:
      throw Error("KV cache dtype " + dtype_name(dtype) + " is not supported");
  }
}

const AttentionOps& attention_ops_scalar() {
  static const AttentionOps ops{&load_rows, &scores, &accumulate, &online_softmax_update, &attention_tile_by_query,
                                &store_row_scalar};
  return ops;
}

}  // namespace db::kernels

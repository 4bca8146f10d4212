#include <cstring>

#include "kernels/cpu/attention_ops.h"
#include "util/error.h"
#include "util/fp16.h"

namespace db::kernels {

namespace {

void load_rows(const void* base, DType dtype, const int64_t* slots, int n_rows, int64_t row_stride, int head, int d,
               float* dst) {
  const auto elem = static_cast<int64_t>(block_bytes(dtype));
  const auto* bytes = static_cast<const uint8_t*>(base);
  for (int r = 0; r < n_rows; ++r) {
    const uint8_t* src = bytes + kv_cache_offset(slots[r], row_stride, head, d) * elem;
    float* out = dst + static_cast<int64_t>(r) * d;
    if (dtype == DType::F32) {
      std::memcpy(out, src, static_cast<size_t>(d) * sizeof(float));
    } else if (dtype == DType::F16) {
      for (int i = 0; i < d; ++i) out[i] = fp16_to_f32(load_u16(src + 2 * i));
    } else {
      for (int i = 0; i < d; ++i) out[i] = bf16_to_f32(load_u16(src + 2 * i));
    }
  }
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

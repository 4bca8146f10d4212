// The inner loops of paged attention, one implementation per ISA level. All
// buffers are f32 except the cache rows `load_rows` converts from.
#pragma once
#include <cstdint>

#include "kernels/cpu/softmax.h"
#include "tensor/dtype.h"
#include "util/cpu_features.h"

namespace db::kernels {

struct AttentionOps {
  // dst[r][0..d) = head `head` of cache rows slot0 + r, r < n_rows, as f32.
  void (*load_rows)(const void* base, DType dtype, int64_t slot0, int n_rows, int n_kv_heads, int head, int d,
                    float* dst);
  // scores[j] = scale * dot(q, keys[j]), j < n_keys; keys are n_keys rows of d floats.
  void (*scores)(const float* q, const float* keys, int n_keys, int d, float scale, float* scores);
  // acc = acc * correction + sum_j weights[j] * values[j], j < n_keys, in index order.
  void (*accumulate)(float* acc, float correction, const float* weights, const float* values, int n_keys, int d);
  // online_softmax_update() (kernels/cpu/softmax.h), possibly vectorized.
  float (*softmax_update)(OnlineSoftmax& state, float* scores, int64_t n);
};

const AttentionOps& attention_ops_scalar();
const AttentionOps& attention_ops_avx2();    // requires AVX2 + FMA + F16C
const AttentionOps& attention_ops_avx512();  // requires AVX-512 F/BW/VL (x86-64 builds only)
// The implementation for `level` (AVX-512 serves both AVX-512 levels).
const AttentionOps& attention_ops(IsaLevel level);

}  // namespace db::kernels

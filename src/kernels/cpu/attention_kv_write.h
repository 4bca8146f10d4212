// Writes new tokens' K and V rows into one layer of the paged KV cache,
// converting from f32 to the cache dtype (round to nearest even).
#pragma once
#include <cstdint>

#include "tensor/dtype.h"

namespace db::kernels {

// One layer's writable K and V arrays: [num_slots][row_elems] elements of dtype.
struct PagedKVLayerOut {
  void* k;
  void* v;
  DType dtype;        // F32, F16 or BF16
  int64_t num_slots;  // rows in each array
  int64_t row_elems;  // n_kv_heads * head_dim
};

// k, v: n_tokens rows of row_elems floats, row stride src_stride floats.
// Token i's rows go to slot slots[i] (checked against num_slots).
void write_kv_rows(const float* k, const float* v, int64_t src_stride, int64_t n_tokens, const int64_t* slots,
                   const PagedKVLayerOut& dst);

}  // namespace db::kernels

// Writes new tokens' K and V rows into one layer of the paged KV cache,
// converting from f32 to the cache dtype (round to nearest even; Q8_0 by
// GGML's reference quantizer, each row on its own, so a row's bytes never
// depend on the other rows of the step).
#pragma once
#include <cstdint>

#include "tensor/dtype.h"

namespace db::kernels {

// One layer's writable K and V arrays, elements of dtype: slot s's K row (its
// k_row_elems elements, all kv heads) starts at element s * k_row_stride of k,
// its V row at s * v_row_stride of v (the layout of PagedKVLayer). v may be
// null: K rows only (the latent layout, whose values are part of the keys).
struct PagedKVLayerOut {
  void* k;
  void* v;
  DType dtype;          // F32, F16, BF16 or Q8_0 (rows of kv_row_bytes(dtype, row_stride) bytes)
  int64_t num_slots;    // rows (slots) in each array
  int64_t k_row_elems;  // elements written per slot: n_kv_heads * k_head_dim
  int64_t v_row_elems;  // n_kv_heads * v_head_dim (unused when v is null)
  int64_t k_row_stride;  // elements from one slot to the next; at least k_row_elems
  int64_t v_row_stride;  // likewise for V

  // Separate K and V arrays of [num_slots][row_elems].
  static PagedKVLayerOut key_value(void* k, void* v, DType dtype, int64_t num_slots, int64_t row_elems) {
    return {k, v, dtype, num_slots, row_elems, row_elems, row_elems, row_elems};
  }
  // K rows of row_elems only, packed: [num_slots][row_elems].
  static PagedKVLayerOut keys_only(void* k, DType dtype, int64_t num_slots, int64_t row_elems) {
    return {k, nullptr, dtype, num_slots, row_elems, 0, row_elems, 0};
  }
};

// k: n_tokens rows of k_row_elems floats, v (ignored when dst.v is null; else
// required): n_tokens rows of v_row_elems floats, both with row stride
// src_stride floats. Token i's rows go to slot slots[i] (checked against num_slots).
void write_kv_rows(const float* k, const float* v, int64_t src_stride, int64_t n_tokens, const int64_t* slots,
                   const PagedKVLayerOut& dst);

}  // namespace db::kernels

// What a model caches per token and layer, independent of any memory: the
// layout of the arrays and their row widths. The block bookkeeping
// (kv_cache_spec.h) and the tensor memory (model/kv_store.h) derive from it.
#pragma once
#include <cstddef>
#include <string>

#include "tensor/dtype.h"

namespace db {

enum class KVLayout {
  KeyValue,  // separate K and V arrays per layer (standard and grouped-query attention)
  Latent,    // one array per layer; V is the first v_width values of each K row (MLA: latent + rope key)
};

// "KeyValue" or "Latent" (for messages).
const char* kv_layout_name(KVLayout layout);

struct KVCacheShape {
  KVLayout layout = KVLayout::KeyValue;
  int n_layers = 0;
  int k_width = 0;  // elements per token and layer in K: n_kv_heads * head_dim, or kv_lora_rank + rope dims
  int v_width = 0;  // elements of V: KeyValue, its own array's row; Latent, the prefix of the K row it reads

  // Separate K and V of n_kv_heads x head_dim each.
  static KVCacheShape key_value(int n_layers, int n_kv_heads, int head_dim);
  // One latent row of kv_lora_rank + rope_dims whose first kv_lora_rank values are V.
  static KVCacheShape latent(int n_layers, int kv_lora_rank, int rope_dims);

  // Throws db::Error unless every size is positive (and, Latent, v_width <= k_width).
  void validate() const;
  // Elements one token takes over all layers: n_layers * (k_width + v_width) for
  // KeyValue, n_layers * k_width for Latent.
  size_t elements_per_token() const;
  // Bytes one token takes over all layers in a KV dtype (F16, F32, BF16 or Q8_0,
  // whose rows take kv_row_bytes(); other types throw db::Error).
  size_t bytes_per_token(DType dtype) const;
  // "KeyValue, 30 layers x K 192 + V 192" or "Latent, 27 layers x 576 (V = first 512)".
  std::string describe() const;

  bool operator==(const KVCacheShape&) const = default;
};

// Throws db::Error unless t is a KV cache element type (F16, F32, BF16 or Q8_0).
void check_kv_dtype(DType t);

}  // namespace db

#include "kvcache/kv_cache_shape.h"

#include "tensor/kv_row_bytes.h"
#include "util/error.h"

namespace db {

const char* kv_layout_name(KVLayout layout) {
  switch (layout) {
    case KVLayout::KeyValue:
      return "KeyValue";
    case KVLayout::Latent:
      return "Latent";
  }
  return "unknown";
}

KVCacheShape KVCacheShape::key_value(int n_layers, int n_kv_heads, int head_dim) {
  if (n_kv_heads <= 0 || head_dim <= 0)
    throw Error("KV cache shape: kv heads (" + std::to_string(n_kv_heads) + ") and head dim (" +
                std::to_string(head_dim) + ") must be positive");
  const int width = n_kv_heads * head_dim;
  KVCacheShape s{KVLayout::KeyValue, n_layers, width, width};
  s.validate();
  return s;
}

KVCacheShape KVCacheShape::latent(int n_layers, int kv_lora_rank, int rope_dims) {
  if (kv_lora_rank <= 0 || rope_dims < 0)
    throw Error("KV cache shape: kv lora rank (" + std::to_string(kv_lora_rank) + ") must be positive and rope dims (" +
                std::to_string(rope_dims) + ") not negative");
  KVCacheShape s{KVLayout::Latent, n_layers, kv_lora_rank + rope_dims, kv_lora_rank};
  s.validate();
  return s;
}

void KVCacheShape::validate() const {
  if (layout != KVLayout::KeyValue && layout != KVLayout::Latent)
    throw Error("KV cache shape: unknown layout " + std::to_string(static_cast<int>(layout)));
  if (n_layers <= 0 || k_width <= 0 || v_width <= 0)
    throw Error("KV cache shape (" + describe() + "): layers and widths must be positive");
  if (layout == KVLayout::Latent && v_width > k_width)
    throw Error("KV cache shape (" + describe() + "): V must be a prefix of the latent row");
}

size_t KVCacheShape::elements_per_token() const {
  validate();
  const size_t per_layer = layout == KVLayout::KeyValue ? size_t(k_width) + size_t(v_width) : size_t(k_width);
  return size_t(n_layers) * per_layer;
}

size_t KVCacheShape::bytes_per_token(DType dtype) const {
  check_kv_dtype(dtype);
  validate();
  // Row by row: a Q8_0 row rounds up to whole 32-element blocks.
  const size_t per_layer = layout == KVLayout::KeyValue ? kv_row_bytes(dtype, k_width) + kv_row_bytes(dtype, v_width)
                                                        : kv_row_bytes(dtype, k_width);
  return size_t(n_layers) * per_layer;
}

std::string KVCacheShape::describe() const {
  std::string s = std::string(kv_layout_name(layout)) + ", " + std::to_string(n_layers) + " layers x ";
  if (layout == KVLayout::Latent) return s + std::to_string(k_width) + " (V = first " + std::to_string(v_width) + ")";
  return s + "K " + std::to_string(k_width) + " + V " + std::to_string(v_width);
}

void check_kv_dtype(DType t) {
  if (t != DType::F16 && t != DType::F32 && t != DType::BF16 && t != DType::Q8_0)
    throw Error("KV cache dtype must be F16, F32, BF16 or Q8_0, got " + dtype_name(t));
}

}  // namespace db

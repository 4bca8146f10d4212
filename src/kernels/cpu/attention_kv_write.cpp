#include "kernels/cpu/attention_kv_write.h"

#include <string>

#include "kernels/cpu/attention_ops.h"
#include "tensor/kv_row_bytes.h"
#include "util/error.h"

namespace db::kernels {

void write_kv_rows(const float* k, const float* v, int64_t src_stride, int64_t n_tokens, const int64_t* slots,
                   const PagedKVLayerOut& dst) {
  if (dst.dtype != DType::F32 && dst.dtype != DType::F16 && dst.dtype != DType::BF16 && dst.dtype != DType::Q8_0)
    throw Error("KV cache dtype " + dtype_name(dst.dtype) + " is not supported");
  DB_CHECK(dst.k_row_elems >= 0 && dst.k_row_stride >= dst.k_row_elems, "KV cache K rows overlap");
  DB_CHECK(dst.v == nullptr || (v != nullptr && dst.v_row_elems >= 0 && dst.v_row_stride >= dst.v_row_elems),
           "KV cache V rows overlap or have no source");
  const AttentionOps& ops = attention_ops(cpu_features().level);
  // Row strides in bytes (a Q8_0 row is whole 32-element blocks: kv_row_bytes).
  const auto k_stride = static_cast<int64_t>(kv_row_bytes(dst.dtype, dst.k_row_stride));
  const auto v_stride = static_cast<int64_t>(kv_row_bytes(dst.dtype, dst.v_row_stride));
  for (int64_t i = 0; i < n_tokens; ++i) {
    const int64_t slot = slots[i];
    DB_CHECK(slot >= 0 && slot < dst.num_slots, "slot " + std::to_string(slot) + " outside the KV cache");
    ops.store_row(k + i * src_stride, dst.k_row_elems, dst.dtype,
                  static_cast<uint8_t*>(dst.k) + slot * k_stride);
    if (dst.v != nullptr)
      ops.store_row(v + i * src_stride, dst.v_row_elems, dst.dtype,
                    static_cast<uint8_t*>(dst.v) + slot * v_stride);
  }
}

}  // namespace db::kernels

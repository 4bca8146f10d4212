#include "kernels/cpu/attention_kv_write.h"

#include <string>

#include "kernels/cpu/attention_ops.h"
#include "util/error.h"

namespace db::kernels {

void write_kv_rows(const float* k, const float* v, int64_t src_stride, int64_t n_tokens, const int64_t* slots,
                   const PagedKVLayerOut& dst) {
  if (dst.dtype != DType::F32 && dst.dtype != DType::F16 && dst.dtype != DType::BF16)
    throw Error("KV cache dtype " + dtype_name(dst.dtype) + " is not supported");
  const AttentionOps& ops = attention_ops(cpu_features().level);
  const size_t row_nbytes = static_cast<size_t>(dst.row_elems) * block_bytes(dst.dtype);
  for (int64_t i = 0; i < n_tokens; ++i) {
    const int64_t slot = slots[i];
    DB_CHECK(slot >= 0 && slot < dst.num_slots, "slot " + std::to_string(slot) + " outside the KV cache");
    const size_t offset = static_cast<size_t>(slot) * row_nbytes;
    ops.store_row(k + i * src_stride, dst.row_elems, dst.dtype, static_cast<uint8_t*>(dst.k) + offset);
    ops.store_row(v + i * src_stride, dst.row_elems, dst.dtype, static_cast<uint8_t*>(dst.v) + offset);
  }
}

}  // namespace db::kernels

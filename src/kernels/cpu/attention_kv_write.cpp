#include "kernels/cpu/attention_kv_write.h"

#include <cstring>
#include <string>

#include "util/error.h"
#include "util/fp16.h"

namespace db::kernels {

namespace {
void store_row(const float* src, int64_t n, DType dtype, uint8_t* dst) {
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
}  // namespace

void write_kv_rows(const float* k, const float* v, int64_t src_stride, int64_t n_tokens, const int64_t* slots,
                   const PagedKVLayerOut& dst) {
  const size_t row_nbytes = static_cast<size_t>(dst.row_elems) * block_bytes(dst.dtype);
  for (int64_t i = 0; i < n_tokens; ++i) {
    const int64_t slot = slots[i];
    DB_CHECK(slot >= 0 && slot < dst.num_slots, "slot " + std::to_string(slot) + " outside the KV cache");
    const size_t offset = static_cast<size_t>(slot) * row_nbytes;
    store_row(k + i * src_stride, dst.row_elems, dst.dtype, static_cast<uint8_t*>(dst.k) + offset);
    store_row(v + i * src_stride, dst.row_elems, dst.dtype, static_cast<uint8_t*>(dst.v) + offset);
  }
}

}  // namespace db::kernels
